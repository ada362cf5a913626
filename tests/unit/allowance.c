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
#include "internal.h"
#include "fastpath.h"
#include "route.h"

#define THREADS 2
#define BLOCK   64
#define FILL    4096

static atomic_int granted, filled;
static atomic_long spent;
/* Families of markers, never called: the test looks at which one the live
 * table holds. */
static struct gfp_routes live, inner, fams[ROUTE_KINDS];

static void sleep_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* Through the engine, as the shim's own routes would: the thread registers
 * and is granted an allowance. */
static void grant(void)
{
	void *p = fastpath_policy_alloc(GFP_E_malloc, 24, 0, 0, 0);
	if (!p)
		abort();
	fastpath_policy_free(GFP_E_free, p, 0, 0);
}

#define MARK(T, k, i) ((T)(uintptr_t)(0x1000 + 16 * (k) + (i)))

static void install_budget_routes(void)
{
	for (int k = 0; k < ROUTE_KINDS; k++)
		fams[k] = (struct gfp_routes){MARK(void *(*)(size_t), k, 0),
		                              MARK(void (*)(void *), k, 1),
		                              MARK(void *(*)(size_t, size_t), k, 2),
		                              MARK(void *(*)(void *, size_t), k, 3),
		                              MARK(int (*)(void **, size_t, size_t), k, 4),
		                              MARK(void *(*)(size_t, size_t), k, 5),
		                              MARK(void *(*)(size_t, size_t), k, 6)};
	live = fams[ROUTE_SHIM];
	route_install(&live, &inner, fams, (struct route_choice){ROUTE_BUDGET, ROUTE_BUDGET});
}

static bool budget_fast(void)
{
	return live.malloc == fams[ROUTE_BUDGET].malloc &&
	       live.aligned_alloc == fams[ROUTE_BUDGET].aligned_alloc;
}

static bool budget_slow(void)
{
	return live.malloc == fams[ROUTE_SHIM].malloc &&
	       live.aligned_alloc == fams[ROUTE_SHIM].aligned_alloc;
}

static void *holder(void *arg)
{
	(void)arg;
	grant();
	CHECK(gfp_tls.budget.allowance > 2 * GFP_CHARGE(BLOCK));
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
	install_budget_routes();
	CHECK(budget_fast());
	CHECK(live.free == fams[ROUTE_BUDGET].free); /* jemalloc's own */
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, holder, NULL);
	while (atomic_load(&granted) < THREADS)
		sleep_ms(1);
	static void *blocks[8192];
	int n = 0;
	while (n < 8192 &&
	       (blocks[n] = fastpath_alloc_flags(GFP_E_malloc, NULL, FILL, 0,
	                                         GFP_KERNEL | GFP_NORETRY | GFP_NOWARN)))
		n++;
	CHECK(n < 8192);
	CHECK(budget_slow()); /* the first exact decision */
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
		fastpath_policy_free(GFP_E_free, blocks[--n], 0, 0);
	grant();
	CHECK(budget_fast());
}

static bool free_shim(void)
{
	return live.free == fams[ROUTE_SHIM].free;
}

static void *exits(void *arg)
{
	(void)arg;
	grant();
	return NULL;
}

static void test_free_route(void)
{
	pthread_t t;
	pthread_create(&t, NULL, exits, NULL);
	pthread_join(t, NULL);
	CHECK(free_shim()); /* past its exit, it may still free */
	/* join returns when the kernel clears the thread's tid, before the
	 * thread leaves the process: tgkill may see it a while longer, and
	 * thread_reap_late looks once a millisecond. */
	for (int i = 0; i < 500 && free_shim(); i++) {
		sleep_ms(2);
		thread_reap_late();
	}
	CHECK(live.free == fams[ROUTE_BUDGET].free); /* gone: jemalloc's free again */

	budget_waiter_enter();
	CHECK(free_shim());
	budget_waiter_exit();
	CHECK(!free_shim());
	route_free_switches = false;
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
