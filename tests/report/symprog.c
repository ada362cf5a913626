/*
 * symprog - allocations on known lines, for the symbolization test of
 * gfp-report: one in an out-of-line function, one in a function inlined
 * into another, so that both a plain frame and an inline chain are checked.
 * The script finds the lines by their SITE: markers, not by number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Always inlined, even at -O0: the frame is build_entry's, and only the
 * debug information knows make_label was there. */
static inline __attribute__((always_inline)) char *make_label(const char *s)
{
	char *p = malloc(strlen(s) + 1); /* SITE:label */
	if (p)
		strcpy(p, s);
	return p;
}

__attribute__((noinline)) static char *make_buffer(size_t n)
{
	char *p = malloc(n); /* SITE:buffer */
	if (p)
		memset(p, 0, n);
	return p;
}

__attribute__((noinline)) static char *build_entry(const char *s)
{
	return make_label(s); /* SITE:entry */
}

int main(void)
{
	/* The first two eligible calls, in this order: fail.nth=1 and 2. */
	char *b = make_buffer(64);
	char *e = build_entry("entry");
	if (!b || !e) {
		fputs("symprog: out of memory\n", stderr);
		free(b);
		free(e);
		return 1;
	}
	printf("%s %zu\n", e, strlen(b));
	free(b);
	free(e);
	return 0;
}
