/*
 * The budget's allowances and routes, across threads.
 *
 * Revocation: other threads hold fresh allowances while the main thread
 * fills the budget to its watermark with exact requests. Those take every
 * allowance back: the holders' takes through the engine fail from then on,
 * and the budget routes, whose takes do not look, are pointed at the shim's
 * until the budget is far from its watermark again.
 *
 * The free route: a thread past its exit under a budget keeps free on the
 * shim until it is gone, and so does a waiter while it waits.
 * Runs under ThreadSanitizer in CI.
 */
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "fastpath.h"

#define THREADS 2
#define BLOCK   64
#define FILL    4096

static atomic_int granted, filled;
static atomic_long spent;
static int budget_fast_sets, budget_slow_sets;
static bool budget_fast;

static void sleep_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* Through the engine, as the shim's own routes would: the thread registers
 * and is granted an allowance. */
static void grant(void)
{
	void *p = gfp_alloc_policy(GFP_E_malloc, 24, 0, 0, 0);
	if (!p)
		abort();
	gfp_free_policy(GFP_E_free, p, 0, 0);
}

static void record_budget_route(bool fast)
{
	*(fast ? &budget_fast_sets : &budget_slow_sets) += 1;
	budget_fast = fast;
}

static void *holder(void *arg)
{
	(void)arg;
	grant();
	CHECK(gfp_tls.allowance > 2 * GFP_CHARGE(BLOCK));
	atomic_fetch_add(&granted, 1);
	while (!atomic_load(&filled))
		sleep_ms(1);
	while (budget_allowance_take(GFP_CHARGE(BLOCK))) {
		if (!mallocx(BLOCK, 0))
			abort();
		atomic_fetch_add(&spent, BLOCK);
	}
	return NULL;
}

static void test_revocation(void)
{
	budget_route_hook(record_budget_route);
	CHECK(budget_fast && budget_fast_sets == 1);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, holder, NULL);
	while (atomic_load(&granted) < THREADS)
		sleep_ms(1);
	static void *blocks[8192];
	int n = 0;
	while (n < 8192 && (blocks[n] = gfp_alloc_flags(GFP_E_malloc, NULL, FILL, 0,
	                                                GFP_KERNEL | GFP_NORETRY | GFP_NOWARN)))
		n++;
	CHECK(n < 8192);
	CHECK(!budget_fast && budget_slow_sets == 1); /* the first exact decision */
	atomic_store(&filled, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	int64_t live = budget_live(), wm = budget_watermark(GFP_KERNEL);
	fprintf(stderr,
	        "filled %d x %d bytes, then %ld from the allowances: live %lld, watermark %lld\n",
	        n, FILL, atomic_load(&spent), (long long)live, (long long)wm);
	CHECK(atomic_load(&spent) == 0);
	CHECK(live <= wm);

	/* Far from the watermark again: the next grant brings the routes back. */
	while (n > 0)
		gfp_free_policy(GFP_E_free, blocks[--n], 0, 0);
	grant();
	CHECK(budget_fast && budget_fast_sets == 2);
}

static int route_sets;
static bool route_shim;

static void record_route(bool shim)
{
	route_sets++;
	route_shim = shim;
}

static void *exits(void *arg)
{
	(void)arg;
	grant();
	return NULL;
}

static void test_free_route(void)
{
	gfp_free_route_set = record_route;
	pthread_t t;
	pthread_create(&t, NULL, exits, NULL);
	pthread_join(t, NULL);
	CHECK(route_sets >= 1 && route_shim); /* past its exit, it may still free */
	/* join returns when the kernel clears the thread's tid, before the
	 * thread leaves the process: tgkill may see it a while longer, and
	 * thread_reap_late looks once a millisecond. */
	for (int i = 0; i < 500 && route_shim; i++) {
		sleep_ms(2);
		thread_reap_late();
	}
	CHECK(!route_shim); /* gone: jemalloc's free again */

	budget_waiter_enter();
	CHECK(route_shim);
	budget_waiter_exit();
	CHECK(!route_shim);
	gfp_free_route_set = NULL;
}

int main(void)
{
	setenv("GFP_POLICY", "limit=8M", 1);
	grant();
	CHECK(gfp_budget_on);
	test_revocation();
	test_free_route();
	return CHECK_DONE();
}
