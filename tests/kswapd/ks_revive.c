/*
 * ks_revive - a cache that only its own workers can shrink: the registered
 * shrinker frees the oldest blocks when a worker calls it (direct reclaim)
 * and nothing when any other thread does (the shim's kswapd). So every
 * round of background reclaim is fruitless, and every round of direct
 * reclaim makes progress.
 *
 * ks_revive THREADS BLOCKS SIZE
 * THREADS threads each allocate BLOCKS blocks of SIZE bytes, one at a time,
 * into the shared cache. Prints one JSON line: the blocks that got NULL
 * (none expected: direct reclaim always frees), what the workers freed, and
 * how many calls of the shrinker came from elsewhere (kswapd's rounds).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gfpshim.h>

struct block {
	struct block *next;
};

static struct {
	pthread_mutex_t lock;
	struct block *head, *tail; /* oldest first */
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned blocks;
static size_t size;
static __thread int worker;
static uint64_t nulls, freed_by_workers, scans_elsewhere; /* atomic */

static size_t scan(void *arg, size_t want, gfp_t ctx)
{
	(void)arg;
	(void)ctx;
	if (!worker) {
		__atomic_add_fetch(&scans_elsewhere, 1, __ATOMIC_RELAXED);
		return 0;
	}
	size_t freed = 0;
	pthread_mutex_lock(&cache.lock);
	while (cache.head && freed < want) {
		struct block *b = cache.head;
		cache.head = b->next;
		if (!cache.head)
			cache.tail = NULL;
		freed += size;
		free(b);
	}
	pthread_mutex_unlock(&cache.lock);
	__atomic_add_fetch(&freed_by_workers, freed, __ATOMIC_RELAXED);
	return freed;
}

static void *work(void *arg)
{
	(void)arg;
	worker = 1;
	for (unsigned i = 0; i < blocks; i++) {
		struct block *b = malloc(size);
		if (!b) {
			__atomic_add_fetch(&nulls, 1, __ATOMIC_RELAXED);
			continue;
		}
		memset(b, (int)i, size);
		b->next = NULL;
		pthread_mutex_lock(&cache.lock);
		if (cache.tail)
			cache.tail->next = b;
		else
			cache.head = b;
		cache.tail = b;
		pthread_mutex_unlock(&cache.lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: ks_revive THREADS BLOCKS SIZE\n");
		return 2;
	}
	unsigned threads = (unsigned)atoi(argv[1]);
	blocks = (unsigned)atoi(argv[2]);
	size = (size_t)atol(argv[3]);
	if (threads < 1 || threads > 64 || size < sizeof(struct block)) {
		fprintf(stderr, "ks_revive: 1-64 threads, blocks of at least %zu bytes\n",
		        sizeof(struct block));
		return 2;
	}
	if (gfp_shrinker_register(scan, NULL, GFP_SHRINK_NONE) != 0) {
		fprintf(stderr, "ks_revive: gfp_shrinker_register failed\n");
		return 2;
	}
	pthread_t t[64];
	for (unsigned i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0) {
			fprintf(stderr, "ks_revive: pthread_create failed\n");
			return 2;
		}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	/* The cache goes before the line is printed: stdio's buffer needs
	 * room, and only a worker may shrink it. */
	while (cache.head) {
		struct block *b = cache.head;
		cache.head = b->next;
		free(b);
	}
	printf("{\"nulls\":%llu,\"freed_by_workers\":%llu,\"scans_elsewhere\":%llu}\n",
	       (unsigned long long)nulls, (unsigned long long)freed_by_workers,
	       (unsigned long long)scans_elsewhere);
	return 0;
}
