/*
 * The per-thread registry under concurrency: threads that start, count and
 * exit while others do the same must leave exact totals, and a block of an
 * exited thread must be reused, not leaked. Runs under ThreadSanitizer in CI.
 */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "internal.h"
#include "fastpath.h"

#define THREADS 8
#define ROUNDS	3
#define CALLS	5000

static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < CALLS; i++) {
		void *p = fastpath_policy_alloc(GFP_E_malloc, 24, 0, 0, 0);
		if (!p)
			abort();
		fastpath_policy_free(GFP_E_free, p, 0, 0);
	}
	return NULL;
}

int main(void)
{
	setenv("GFP_POLICY", "stats=totals", 1);
	for (int round = 0; round < ROUNDS; round++) {
		pthread_t t[THREADS];
		for (int i = 0; i < THREADS; i++)
			pthread_create(&t[i], NULL, work, NULL);
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
	}
	CHECK(gfp_meaning.active);
	struct gfp_entry_stats s[GFP_ENTRY_COUNT];
	thread_sum_stats(s);
	CHECK(s[GFP_E_malloc].calls == (uint64_t)THREADS * ROUNDS * CALLS);
	CHECK(s[GFP_E_malloc].bytes == (uint64_t)THREADS * ROUNDS * CALLS * 24);
	CHECK(s[GFP_E_free].calls == (uint64_t)THREADS * ROUNDS * CALLS);
	CHECK(s[GFP_E_malloc].failures == 0);
	return CHECK_DONE();
}
