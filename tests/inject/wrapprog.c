/*
 * wrapprog MODE [FILE]: every allocation through one wrapper, as jq's
 * jv_mem_alloc or an xmalloc: its call sites differ only below the wrapper,
 * so that telling them apart takes an unwind of every call by hit, and one
 * by call number. Some callers check for NULL (exit 1), one does not (a
 * crash), one returns nothing and prints less (silent).
 *
 *   plain     one thread, the same calls every run
 *   threads   a second thread allocates too (21 calls), and hands its last
 *             block to a detached thread that only frees it and exits
 *   counter   FILE holds a number this run adds one to: that many extra
 *             calls, so no two runs allocate alike
 *   diverge   an extra call first when GFP_POLICY asks for a call number:
 *             a run by call number finds another path at every hit's call
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) void *grab(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory"); /* a frame of its own */
	return p;
}

static __attribute__((noinline)) char *name_of(int i)
{
	char *s = grab(32);
	if (!s)
		exit(1);
	snprintf(s, 32, "item-%d", i);
	return s;
}

static __attribute__((noinline)) int *table(int n)
{
	int *t = grab((size_t)n * sizeof(*t));
	for (int i = 0; i < n; i++)
		t[i] = i * i; /* unchecked: a crash */
	return t;
}

static __attribute__((noinline)) char *note(void)
{
	return grab(64); /* NULL leaves the note out */
}

static void *freer(void *block)
{
	free(block);
	return NULL;
}

static void *other(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++)
		free(name_of(i));
	pthread_attr_t a;
	pthread_t t;
	char *last = name_of(20);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, freer, last) != 0)
		free(last);
	pthread_attr_destroy(&a);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	int extra = 0;
	if (strcmp(mode, "counter") == 0 && argc > 2) {
		FILE *f = fopen(argv[2], "r+");
		if (!f || fscanf(f, "%d", &extra) != 1)
			return 2;
		rewind(f);
		fprintf(f, "%d\n", extra + 1);
		fclose(f);
	}
	const char *pol = getenv("GFP_POLICY");
	if (strcmp(mode, "diverge") == 0 && pol && strstr(pol, "fail.site.call"))
		extra = 1;
	for (int i = 0; i < extra; i++)
		free(grab(16));
	pthread_t t;
	if (strcmp(mode, "threads") == 0 && pthread_create(&t, NULL, other, NULL) != 0)
		return 2;
	for (int i = 0; i < 4; i++) {
		char *s = name_of(i);
		int *v = table(8 + i);
		char *n = note();
		if (n)
			snprintf(n, 64, " (noted)");
		printf("%s %d%s\n", s, v[3], n ? n : "");
		free(s);
		free(v);
		free(n);
	}
	if (strcmp(mode, "threads") == 0)
		pthread_join(t, NULL);
	return 0;
}
