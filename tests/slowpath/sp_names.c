/*
 * sp_names - a failure report names its frames when the address space is
 * full and other threads take whatever of it comes free.
 *
 * sp_names THIEVES: fills the address space under RLIMIT_AS, lets THIEVES
 * threads (started before, so that their stacks exist) map every page
 * that comes free, in pieces as large as they can get, then makes one
 * plain malloc(65536) from sp_named_request, a function of this program
 * (named only through its .symtab). Under default=NORETRY the request
 * fails with the failure report, whose frames the shim names by mapping
 * the program's symbol table: address space the thieves must not get.
 * A first request larger than the address space, before the fill, sets
 * the unwinder up (the fill's failures report too, from main), so that
 * the request's report needs nothing but the names. Prints
 * "first=null|ok result=null|ok errno=N stolen=N".
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_THIEVES 8

static int go, stop; /* atomic */
static long stolen[MAX_THIEVES];
static void *(*volatile malloc_fn)(size_t) = malloc;

static void *map_none(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Takes every piece of address space it can get, largest first. */
static void *thief(void *arg)
{
	long *n = arg;
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		for (size_t len = (size_t)16 << 20; len >= 4096; len /= 2)
			if (map_none(len))
				*n += (long)(len / 4096);
	return NULL;
}

static long vm_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0;
	if (!f || fscanf(f, "%ld", &pages) != 1) {
		perror("sp_names: /proc/self/statm");
		exit(2);
	}
	fclose(f);
	return pages * sysconf(_SC_PAGESIZE);
}

static __attribute__((noinline, noclone)) void *sp_named_request(size_t n)
{
	void *p = malloc_fn(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(int argc, char **argv)
{
	int thieves = argc > 1 ? atoi(argv[1]) : 0;
	if (thieves < 0 || thieves > MAX_THIEVES) {
		fprintf(stderr, "usage: sp_names [THIEVES (0..%d)]\n", MAX_THIEVES);
		return 2;
	}
	/* more than the address space: fails anywhere */
	void *first = malloc_fn((size_t)1 << 47);
	/* stdout's buffer, before nothing is left to malloc it from */
	printf("thieves=%d\n", thieves);
	fflush(stdout);
	pthread_t t[MAX_THIEVES];
	for (int i = 0; i < thieves; i++)
		if (pthread_create(&t[i], NULL, thief, &stolen[i]) != 0) {
			fprintf(stderr, "sp_names: pthread_create failed\n");
			return 2;
		}
	struct rlimit rl = {(rlim_t)vm_bytes() + (64u << 20), RLIM_INFINITY};
	if (setrlimit(RLIMIT_AS, &rl) != 0) {
		perror("sp_names: setrlimit");
		return 2;
	}
	/* jemalloc's free extents first (a failure it does not keep ends
	 * nothing: four in a row do), then every page left */
	for (int misses = 0; misses < 4;)
		misses = malloc_fn(65536) ? 0 : misses + 1;
	for (size_t len = (size_t)1 << 20; len >= 4096; len /= 2)
		while (map_none(len))
			;
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	usleep(10000); /* the thieves spin before the request */
	void *p = sp_named_request(65536);
	int err = errno;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	long total = 0;
	for (int i = 0; i < thieves; i++) {
		pthread_join(t[i], NULL);
		total += stolen[i];
	}
	printf("first=%s result=%s errno=%d stolen=%ld\n", first ? "ok" : "null", p ? "ok" : "null",
	       p ? 0 : err, total);
	return 0;
}
