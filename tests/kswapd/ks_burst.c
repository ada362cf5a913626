/*
 * ks_burst - a bursty workload near the budget's watermark: THREADS threads
 * each allocate BURSTS bursts of BLOCKS blocks of SIZE bytes, hand every
 * block to a shared cache and pause GAP microseconds between bursts. The
 * cache only grows; a registered shrinker frees its oldest blocks, so once
 * the cache fills the budget every burst needs reclaim: direct (the
 * allocating thread stalls) or background (kswapd=1).
 *
 * ks_burst THREADS BURSTS BLOCKS SIZE GAP_US [SCAN_US [PACE_LIVE]]
 * SCAN_US: what one call of the shrinker costs besides the frees (a cache
 * that compresses or writes back; spent spinning, 0 by default).
 * PACE_LIVE: after each burst a thread waits until the budget's live bytes
 * are at most PACE_LIVE (the low watermark: kswapd has caught up), or a
 * second has passed (kswapd went to sleep just as they passed it: the next
 * burst's grant wakes it). Then how fast kswapd runs beside the threads
 * decides nothing: each burst starts with a band below the watermark.
 * Prints one JSON line: what ran, how many bytes the shrinker freed and on
 * which threads (the allocating ones or another: kswapd).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gfpshim.h>

struct block {
	struct block *next;
};

static struct {
	pthread_mutex_t lock;
	struct block *head, *tail; /* oldest first */
	size_t bytes;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned bursts, blocks;
static size_t size;
static unsigned gap_us, scan_us;
static long pace_live;
static __thread int worker; /* this thread allocates bursts */
static uint64_t freed_by_worker, freed_elsewhere, scans_elsewhere; /* atomic */
static uint64_t paced, pace_late;                                  /* atomic */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Waits until kswapd has brought live bytes down to pace_live. */
static void pace(void)
{
	struct gfp_budget_usage u;
	double give_up = now_s() + 1;
	bool waited = false;
	while (gfp_budget_usage(&u) == 0 && u.live > pace_live) {
		if (now_s() > give_up) {
			__atomic_add_fetch(&pace_late, 1, __ATOMIC_RELAXED);
			break;
		}
		waited = true;
		struct timespec ts = {0, 200 * 1000};
		nanosleep(&ts, NULL);
	}
	if (waited)
		__atomic_add_fetch(&paced, 1, __ATOMIC_RELAXED);
}

static size_t scan(void *arg, size_t want, gfp_t ctx)
{
	(void)arg;
	(void)ctx;
	size_t freed = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do /* the cache's own work for a scan */
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < scan_us);
	pthread_mutex_lock(&cache.lock);
	while (cache.head && freed < want) {
		struct block *b = cache.head;
		cache.head = b->next;
		if (!cache.head)
			cache.tail = NULL;
		freed += size;
		free(b);
	}
	cache.bytes -= freed;
	pthread_mutex_unlock(&cache.lock);
	__atomic_add_fetch(worker ? &freed_by_worker : &freed_elsewhere, freed, __ATOMIC_RELAXED);
	if (!worker)
		__atomic_add_fetch(&scans_elsewhere, 1, __ATOMIC_RELAXED);
	return freed;
}

static void *work(void *arg)
{
	(void)arg;
	worker = 1;
	struct block **burst = calloc(blocks, sizeof(*burst));
	if (!burst) {
		fprintf(stderr, "ks_burst: no memory for a burst's table\n");
		exit(2);
	}
	for (unsigned i = 0; i < bursts; i++) {
		for (unsigned k = 0; k < blocks; k++) {
			burst[k] = malloc(size);
			if (!burst[k]) {
				fprintf(stderr, "ks_burst: malloc(%zu) failed\n", size);
				exit(3);
			}
			memset(burst[k], (int)k, size);
		}
		pthread_mutex_lock(&cache.lock);
		for (unsigned k = 0; k < blocks; k++) {
			burst[k]->next = NULL;
			if (cache.tail)
				cache.tail->next = burst[k];
			else
				cache.head = burst[k];
			cache.tail = burst[k];
		}
		cache.bytes += blocks * size;
		pthread_mutex_unlock(&cache.lock);
		struct timespec ts = {0, (long)gap_us * 1000};
		nanosleep(&ts, NULL);
		if (pace_live)
			pace();
	}
	free(burst);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 6 || argc > 8) {
		fprintf(
		    stderr,
		    "usage: ks_burst THREADS BURSTS BLOCKS SIZE GAP_US [SCAN_US [PACE_LIVE]]\n");
		return 2;
	}
	unsigned threads = (unsigned)atoi(argv[1]);
	bursts = (unsigned)atoi(argv[2]);
	blocks = (unsigned)atoi(argv[3]);
	size = (size_t)atol(argv[4]);
	gap_us = (unsigned)atoi(argv[5]);
	scan_us = argc >= 7 ? (unsigned)atoi(argv[6]) : 0;
	pace_live = argc == 8 ? atol(argv[7]) : 0;
	if (threads < 1 || threads > 64 || size < sizeof(struct block)) {
		fprintf(stderr, "ks_burst: 1-64 threads, blocks of at least %zu bytes\n",
		        sizeof(struct block));
		return 2;
	}
	if (gfp_shrinker_register(scan, NULL, GFP_SHRINK_NONE) != 0) {
		fprintf(stderr, "ks_burst: gfp_shrinker_register failed\n");
		return 2;
	}
	pthread_t t[64];
	for (unsigned i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0) {
			fprintf(stderr, "ks_burst: pthread_create failed\n");
			return 2;
		}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("{\"threads\":%u,\"bursts\":%u,\"blocks\":%u,\"size\":%zu,\"cached\":%zu,"
	       "\"freed_by_workers\":%llu,\"freed_elsewhere\":%llu,\"scans_elsewhere\":%llu,"
	       "\"paced\":%llu,\"pace_late\":%llu}\n",
	       threads, bursts, blocks, size, cache.bytes, (unsigned long long)freed_by_worker,
	       (unsigned long long)freed_elsewhere, (unsigned long long)scans_elsewhere,
	       (unsigned long long)paced, (unsigned long long)pace_late);
	return 0;
}
