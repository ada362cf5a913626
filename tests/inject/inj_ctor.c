/*
 * inj_ctor - a constructor that allocates before main, for the start-up
 * gate (fail.startup). ctor_alloc runs from the program's constructor,
 * main_alloc three times from main; one line:
 *   ctor=R main=RRR
 */
#include "inj_common.h"

void *ctor_alloc(size_t size);
void *main_alloc(size_t size);

static void *volatile sink;
static char ctor_result = '?';

__attribute__((noinline)) void *ctor_alloc(size_t size)
{
	errno = 0;
	void *p = malloc(size);

	sink = p;
	return p;
}

__attribute__((noinline)) void *main_alloc(size_t size)
{
	errno = 0;
	void *p = malloc(size);

	sink = p;
	return p;
}

__attribute__((constructor)) static void before_main(void)
{
	void *p = ctor_alloc(77);

	ctor_result = inj_result(p, errno);
	free(p);
}

int main(void)
{
	char m[3];

	for (int i = 0; i < 3; i++) {
		void *p = main_alloc(88);

		m[i] = inj_result(p, errno);
		free(p);
	}
	inj_out(1, "ctor=%c main=%.3s\n", ctor_result, m);
	return 0;
}
