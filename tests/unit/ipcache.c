/*
 * The per-call-path cache (site ids, rule masks, filter answers): what a run
 * with a few hundred call paths costs in memory, and that readers without a
 * lock never see a wrong value while a writer fills and grows it.
 *
 * The first check is what made short programs slow under fail.site: each
 * key hashed to its own page of a half-MiB table, a page fault each.
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>

#include "check.h"
#include "ipcache.h"

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Keys as the shim makes them: spread over 64 bits, odd, never 0. */
static uint64_t key_of(uint64_t i)
{
	return ((i + 1) * 0x9e3779b97f4a7c15ULL) | 1;
}

static uint64_t value_of(uint64_t i)
{
	return i * 7 + 1;
}

static struct gfp_ipcache few;

static void few_keys_touch_few_pages(void)
{
	CHECK(ipcache_get(&few, key_of(0)) == 0);
	long before = minor_faults();
	for (uint64_t i = 0; i < 200; i++)
		CHECK(ipcache_put(&few, key_of(i), value_of(i)));
	long faults = minor_faults() - before;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	faults = 0; /* the sanitizers' shadow memory faults too; the plain build counts */
#endif
	/* 200 keys at most half full: a 512-entry table (8 KiB) and the 4 KiB
	 * one it grew from. The old whole-table layout took 207 faults here. */
	if (faults > 8)
		fprintf(stderr, "200 keys cost %ld page faults\n", faults);
	CHECK(faults <= 8);
	for (uint64_t i = 0; i < 200; i++)
		CHECK(ipcache_get(&few, key_of(i)) == value_of(i));
	CHECK(ipcache_get(&few, key_of(200)) == 0);
	/* A key put again keeps its first value (the value is a pure function
	 * of the key for every user; the first answer stands). */
	CHECK(ipcache_put(&few, key_of(3), 12345));
	CHECK(ipcache_get(&few, key_of(3)) == value_of(3));
}

/* Past the largest table: nothing is lost that was kept, no value is
 * wrong, and a key that finds no room is just not kept. */
static struct gfp_ipcache many;

static void many_keys_stay_right(void)
{
	enum { N = 3 * GFP_IPCACHE_MAX / 2 };
	unsigned kept = 0;
	for (uint64_t i = 0; i < N; i++)
		kept += ipcache_put(&many, key_of(i), value_of(i));
	CHECK(ipcache_capacity(&many) == GFP_IPCACHE_MAX);
	CHECK(kept >= GFP_IPCACHE_MAX / 2);
	unsigned found = 0;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t v = ipcache_get(&many, key_of(i));
		CHECK(v == 0 || v == value_of(i));
		found += v != 0;
	}
	CHECK(found == kept);
}

/* Readers probe while one writer fills and grows the table; a reader that
 * has seen a key keep its value must keep finding it. Runs under TSan. */
#define READERS 3
#define KEYS    5000
static struct gfp_ipcache shared;
static uint64_t published; /* atomic: keys [0, published) are in */
static int wrong;          /* atomic */

static void *reader(void *arg)
{
	(void)arg;
	uint64_t seen;
	do {
		seen = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
		for (uint64_t i = 0; i < seen; i++)
			if (ipcache_get(&shared, key_of(i)) != value_of(i))
				__atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
	} while (seen < KEYS);
	return NULL;
}

static void readers_during_growth(void)
{
	pthread_t t[READERS];
	for (int i = 0; i < READERS; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (uint64_t i = 0; i < KEYS; i++) {
		CHECK(ipcache_put(&shared, key_of(i), value_of(i)));
		__atomic_store_n(&published, i + 1, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < READERS; i++)
		pthread_join(t[i], NULL);
	CHECK(__atomic_load_n(&wrong, __ATOMIC_RELAXED) == 0);
	CHECK(ipcache_capacity(&shared) == 16384);
}

int main(void)
{
	few_keys_touch_few_pages();
	many_keys_stay_right();
	readers_during_growth();
	return CHECK_DONE();
}
