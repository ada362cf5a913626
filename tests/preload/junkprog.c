/*
 * junkprog - what the junk= fill left in fresh memory, one "name value" line
 * each: how many of a block's bytes hold 0xa5 (malloc, the aligned ones, the
 * bytes a realloc added, those it kept), a calloc's non-zero bytes, and how
 * many KiB a 64 MiB malloc made resident (its first bytes only are filled:
 * the rest stays untouched).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t count(const unsigned char *p, size_t from, size_t to, unsigned char c)
{
	size_t n = 0;
	for (size_t i = from; i < to; i++)
		n += p[i] == c;
	return n;
}

static long resident_kib(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
		exit(2);
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void *must(void *p)
{
	if (!p) {
		fprintf(stderr, "junkprog: out of memory\n");
		exit(1);
	}
	return p;
}

int main(void)
{
	unsigned char *m = must(malloc(100));
	size_t mu = malloc_usable_size(m);
	printf("malloc %zu of %zu\n", count(m, 0, mu, 0xa5), mu);

	unsigned char *c = must(calloc(1, 1000));
	printf("calloc_nonzero %zu\n", 1000 - count(c, 0, 1000, 0));

	void *a = NULL;
	if (posix_memalign(&a, 64, 200) != 0)
		return 1;
	printf("posix_memalign %zu of %zu\n", count(a, 0, 200, 0xa5), (size_t)200);
	unsigned char *al = must(aligned_alloc(4096, 100));
	printf("aligned_alloc %zu of %zu\n", count(al, 0, 100, 0xa5), (size_t)100);

	/* A realloc keeps what the program wrote and fills what it adds. */
	unsigned char *r = must(malloc(24));
	size_t old = malloc_usable_size(r);
	memset(r, 1, 24);
	r = must(realloc(r, 4096));
	size_t ru = malloc_usable_size(r);
	printf("realloc_kept %zu of 24\n", count(r, 0, 24, 1));
	printf("realloc_slack %zu of %zu\n", count(r, 24, old, 0xa5), old - 24);
	printf("realloc_added %zu of %zu\n", count(r, old, ru, 0xa5), ru - old);

	long before = resident_kib();
	unsigned char *big = must(malloc(64 << 20));
	long after = resident_kib();
	printf("big_prefix %zu of 65536\n", count(big, 0, 65536, 0xa5));
	printf("big_resident_kib %ld\n", after - before);
	free(big);
	free(r);
	free(al);
	free(a);
	free(c);
	free(m);
	return 0;
}
