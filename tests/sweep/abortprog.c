/*
 * abortprog - a program whose xmalloc aborts when malloc fails, called from
 * two places (make_name three times, make_list once): every failure there
 * is an abort the program chose, listed by gfp-sweep once per place, with
 * its runs (aborts.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		fputs("abortprog: out of memory\n", stderr);
		abort();
	}
	return p;
}

__attribute__((noinline)) static char *make_name(const char *s)
{
	char *p = xmalloc(strlen(s) + 1);
	return strcpy(p, s);
}

__attribute__((noinline)) static int *make_list(int n)
{
	int *l = xmalloc((size_t)n * sizeof(*l));
	for (int i = 0; i < n; i++)
		l[i] = i * i;
	return l;
}

int main(void)
{
	const char *words[] = {"squares", "of", "five"};
	for (int i = 0; i < 3; i++) {
		char *name = make_name(words[i]);
		fputs(name, stdout);
		fputs(i < 2 ? " " : ":", stdout);
		free(name);
	}
	int *l = make_list(5);
	printf(" %d %d %d %d %d\n", l[0], l[1], l[2], l[3], l[4]);
	free(l);
	return 0;
}
