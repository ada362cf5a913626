/*
 * uthread - an unmodified program for reserve.thread: it knows nothing of
 * gfpshim (no gfpshim.h, only malloc and free).
 *
 * A worker thread is created and warmed up first. The main thread fills the
 * budget with malloc(4096) until NULL; then the worker asks for 12 x 4096
 * (48K). The main thread frees 1M, the worker frees its 12 blocks (its
 * reserve is topped up after a free when the budget has room), the main
 * thread fills the budget again and the worker asks for 12 x 4096 once more.
 * Prints key=value lines:
 *   worker_tid fill1 round1_ok round1_max_ms fill2 round2_ok round2_max_ms
 * Nothing is printed through stdio: its buffer is a malloc.
 *
 * `uthread rss N` starts N threads that each make one small allocation and
 * wait, and prints the resident bytes before and while they live:
 *   rss_before rss_threads threads
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "statm.h"

#define BLK    4096
#define ROUND  12
#define MAXBLK 65536

static void *blocks[MAXBLK];
static int nblocks;
static void *wblocks[ROUND];
static pthread_barrier_t step;

static __attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(1, buf, (size_t)n) < 0)
		_exit(2);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* malloc(4096) until NULL; returns how many. */
static int fill(void)
{
	int n = 0;
	void *p;
	while (nblocks < MAXBLK && (p = malloc(BLK)) != NULL) {
		memset(p, 0x11, 64);
		blocks[nblocks++] = p;
		n++;
	}
	return n;
}

static void round_of(int which)
{
	int ok = 0;
	double max = 0;
	for (int i = 0; i < ROUND; i++) {
		double t0 = now_ms();
		wblocks[i] = malloc(BLK);
		double dt = now_ms() - t0;
		if (wblocks[i]) {
			memset(wblocks[i], 0x22, BLK);
			ok++;
			if (dt > max)
				max = dt;
		}
	}
	say("round%d_ok=%d\nround%d_max_ms=%.2f\n", which, ok, which, max);
}

static void *worker(void *arg)
{
	(void)arg;
	void *volatile warmup = malloc(100);
	free(warmup);
	say("worker_tid=%d\n", (int)gettid());
	pthread_barrier_wait(&step); /* warmed */
	pthread_barrier_wait(&step); /* the budget is full */
	round_of(1);
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step); /* the main thread freed 1M */
	for (int i = 0; i < ROUND; i++)
		free(wblocks[i]);
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step); /* the budget is full again */
	round_of(2);
	pthread_barrier_wait(&step);
	return NULL;
}

static void *idler(void *arg)
{
	(void)arg;
	void *volatile p = malloc(100);
	free(p);
	pthread_barrier_wait(&step); /* started */
	pthread_barrier_wait(&step); /* measured */
	return NULL;
}

static int rss(int n)
{
	pthread_t th[64];
	if (n < 1 || n > 64)
		return 2;
	long before = statm_bytes(1);
	pthread_barrier_init(&step, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, idler, NULL))
			return 2;
	pthread_barrier_wait(&step);
	say("threads=%d\nrss_before=%ld\nrss_threads=%ld\n", n, before, statm_bytes(1));
	pthread_barrier_wait(&step);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t th;
	if (argc == 3 && !strcmp(argv[1], "rss"))
		return rss(atoi(argv[2]));
	pthread_barrier_init(&step, NULL, 2);
	if (pthread_create(&th, NULL, worker, NULL))
		return 2;
	pthread_barrier_wait(&step);
	say("fill1=%d\n", fill());
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step); /* round 1 done */
	for (int i = 0; i < 256 && nblocks > 0; i++)
		free(blocks[--nblocks]);
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step); /* the worker freed its blocks */
	say("fill2=%d\n", fill());
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step); /* round 2 done */
	pthread_join(th, NULL);
	return 0;
}
