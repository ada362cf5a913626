/*
 * inj_names [SIZE] - one malloc(SIZE) (default 100) from libinjnames' static
 * function hidden_alloc, by way of names_call_hidden. Prints "hidden=R", R
 * as in inj_common.h. Linked twice: inj_names with the stripped libinjnames.so,
 * inj_names_full with libinjnames_full.so.
 */
#include "inj_common.h"

void *names_call_hidden(size_t size);

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	errno = 0;
	void *p = names_call_hidden(size);
	inj_out(1, "hidden=%c\n", inj_result(p, errno));
	free(p);
	return 0;
}
