/*
 * libfoo - a shared library with debug information, whose one allocation
 * is on a marked line (SITE:dup_name, found by the scripts, not by
 * number). Built twice: libfoo.so, and with FOO_OTHER_BUILD another build
 * of it (libfoo_other.so) whose code is elsewhere, so that names taken from
 * the wrong file would show.
 */
#include <stdlib.h>
#include <string.h>

#include "libfoo.h"

#ifdef FOO_OTHER_BUILD
/* Code before dup_name: in this build, dup_name's recorded offset is in
 * here. */
__attribute__((noinline, visibility("default"))) char *dup_reversed(const char *s)
{
	size_t n = strlen(s);
	char *p = malloc(n + 1);
	for (size_t i = 0; p && i < n; i++)
		p[i] = s[n - 1 - i];
	if (p)
		p[n] = '\0';
	return p;
}
#endif

char *dup_name(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n); /* SITE:dup_name */
	if (p)
		memcpy(p, s, n);
	return p;
}
