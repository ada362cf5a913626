/*
 * inj_deep - one malloc 46 frames below deep_root, for fail.depth above 32:
 * fail.sym=deep_root sees it only when fail.depth reaches that far. Prints
 * "X" when the malloc failed, "." when it did not.
 */
#include "inj_common.h"

void *deep_root(void);
void *deep_step(int left);

__attribute__((noinline)) void *deep_step(int left)
{
	void *p = left ? deep_step(left - 1) : malloc(100);
	inj_keep(p); /* work after the call: no tail call, every frame stays */
	return p;
}

__attribute__((noinline)) void *deep_root(void)
{
	void *p = deep_step(44);
	inj_keep(p);
	return p;
}

int main(void)
{
	void *p = deep_root();
	inj_out(1, "%s\n", p ? "." : "X");
	free(p);
	return 0;
}
