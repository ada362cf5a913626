/*
 * sp_report - what the OOM and allocation-failure reports describe.
 *   sp_report fill SIZE    holds 1 MiB at other_site, then allocates SIZE
 *                          bytes at fill_site until one fails; prints
 *                          "filled N" (oom=fail) or dies (oom=kill)
 *   sp_report peak N       N threads each take 8 x 1 MiB at peak_site, wait
 *                          for each other, and hand every block to one
 *                          detached thread that only frees, then exits;
 *                          main waits for it, allocates once more and exits
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *keep[64];

__attribute__((noinline)) static void *other_site(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 1, n);
	return p;
}

__attribute__((noinline)) static void *fill_site(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 2, n);
	return p;
}

__attribute__((noinline)) static void *peak_site(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 3, n);
	return p;
}

static int fill(size_t size)
{
	for (int i = 0; i < 64; i++)
		keep[i] = other_site(16384);
	unsigned long n = 0;
	while (fill_site(size))
		n++;
	printf("filled %lu\n", n);
	return 0;
}

enum { PER_THREAD = 8, MAX_THREADS = 16 };
static int nthreads;
static pthread_barrier_t all_hold;
static void *handed[MAX_THREADS * PER_THREAD];
static sem_t handed_over, freed;

static void *taker(void *arg)
{
	void **mine = arg;
	for (int i = 0; i < PER_THREAD; i++)
		mine[i] = peak_site(1 << 20);
	pthread_barrier_wait(&all_hold);
	sem_post(&handed_over);
	return NULL;
}

static void *freer(void *arg)
{
	(void)arg;
	for (int i = 0; i < nthreads; i++)
		sem_wait(&handed_over);
	for (int i = 0; i < nthreads * PER_THREAD; i++)
		free(handed[i]);
	sem_post(&freed);
	return NULL;
}

static int peak(int n)
{
	pthread_t t[MAX_THREADS], f;
	nthreads = n;
	pthread_barrier_init(&all_hold, NULL, (unsigned)n);
	sem_init(&handed_over, 0, 0);
	sem_init(&freed, 0, 0);
	pthread_attr_t detached;
	pthread_attr_init(&detached);
	pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&f, &detached, freer, NULL) != 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, taker, &handed[i * PER_THREAD]) != 0)
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	sem_wait(&freed);
	free(peak_site(64));
	printf("peak done\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "fill") == 0)
		return fill((size_t)atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "peak") == 0) {
		int n = atoi(argv[2]);
		return n >= 1 && n <= MAX_THREADS ? peak(n) : 2;
	}
	fprintf(stderr, "usage: sp_report fill SIZE | peak THREADS\n");
	return 2;
}
