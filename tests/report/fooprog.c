/*
 * fooprog - trusts libfoo: when the library's allocation fails it takes
 * the length of NULL and crashes, a finding whose failed allocation is in
 * the library (SITE:call marks the call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfoo.h"

int main(void)
{
	char *s = dup_name("fooprog"); /* SITE:call */
	printf("%zu\n", strlen(s));
	free(s);
	return 0;
}
