/*
 * cgroup_high.c - memory.high, a throttle, never a failure: a thread that
 * charged past it reclaims, then sleeps a penalty that grows with the
 * overage, before its request returns, as the kernel's
 * mem_cgroup_handle_over_high does. cgroup.c follows the level and runs up
 * the thread's debt (gfp_memcg_over_high).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "types.h"
#include "thread.h"
#include "context.h"
#include "budget.h"
#include "clock.h"
#include "reclaim.h"
#include "vmstat.h"
#include "cgroup.h"
#include "cgroup_high.h"

/* mem_cgroup_handle_over_high's constants (mm/memcontrol.c). */
#define MAX_HIGH_DELAY_MS   2000        /* MEMCG_MAX_HIGH_DELAY_JIFFIES: 2 s */
#define HIGH_DELAY_MIN_MS   10          /* HZ / 100: a penalty this small is not slept */
#define CHARGE_BATCH        (64 * 4096) /* MEMCG_CHARGE_BATCH pages: the nominal debt */
#define RECLAIM_CLUSTER     (32 * 4096) /* SWAP_CLUSTER_MAX pages: a retry's target */
#define MAX_RECLAIM_RETRIES 16

uint64_t cgroup_high_delay_ms(int64_t over, int64_t high, uint64_t charged)
{
	if (over <= 0 || !charged)
		return 0;
	if (high < 4096)
		high = 4096; /* calculate_overage: a threshold of one page at least */
	/* calculate_overage and calculate_high_delay: with the overage in
	 * 2^-20 of memory.high, overage^2 * HZ >> (20 + 14) jiffies, that is
	 * 2^40 / 2^34 * 1000 = 64000 ms times the overage ratio squared,
	 * scaled by the task's charge against MEMCG_CHARGE_BATCH. Far past
	 * memory.high the 2 s cap applies anyway: the ratio is bounded, and
	 * so is the charge, so that nothing overflows. */
	double ratio = (double)over / (double)high;
	if (ratio > 64)
		ratio = 64;
	double batches =
	    (double)(charged < ((uint64_t)1 << 40) ? charged : (uint64_t)1 << 40) / CHARGE_BATCH;
	double ms = 64000.0 * ratio * ratio * batches;
	return ms >= MAX_HIGH_DELAY_MS ? MAX_HIGH_DELAY_MS : (uint64_t)ms;
}

/* What live bytes stand past memory.high now (exact; the tree's under
 * limit.scope=tree). */
static int64_t over_high_now(void)
{
	int64_t value, live = cgroup_throttle_at(&value);
	return live == INT64_MAX ? 0 : budget_live() - live;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += (time_t)(ms / 1000);
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	/* schedule_timeout_killable: a signal handler runs, the sleep goes on. */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

void cgroup_high_handle(struct gfp_req *req)
{
	/* PF_MEMALLOC (a shrinker, a notifier, kswapd) is never throttled; a
	 * request that may not block keeps the debt for the thread's next one
	 * that may, as the kernel pays it on the return to user space. */
	if (gfp_tls.in_reclaim || gfp_tls.guard)
		return;
	gfp_t f = req->ctx_resolved ? req->gfp : context_resolve(req);
	if (!(f & GFP_DIRECT_RECLAIM_BIT))
		return;
	uint64_t nr = gfp_memcg_over_high;
	gfp_memcg_over_high = 0;
	int saved = errno, cancel;
	/* malloc is no cancellation point: clock_nanosleep is. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	unsigned retries = MAX_RECLAIM_RETRIES, progress_rounds = 0;
	bool in_retry = false;
	for (;;) {
		/* reclaim_high: only while over memory.high, one event each. */
		size_t freed = 0;
		if (over_high_now() > 0) {
			vmstat_memcg_event(GFP_MEMCG_HIGH);
			freed = reclaim_run(f, in_retry ? RECLAIM_CLUSTER : (size_t)nr, true);
			cgroup_refresh(true);
		}
		int64_t high;
		(void)cgroup_throttle_at(&high);
		uint64_t ms = cgroup_high_delay_ms(over_high_now(), high, nr);
		if (ms <= HIGH_DELAY_MIN_MS)
			break;
		/* Reclaim that makes progress is preferred to a sleep; unlike
		 * the kernel's, its rounds with progress are bounded too. */
		if ((freed && progress_rounds++ < MAX_RECLAIM_RETRIES) || retries--) {
			in_retry = true;
			continue;
		}
		uint64_t t0 = gfp_now_ns();
		sleep_ms(ms);
		vmstat_high_delay(gfp_now_ns() - t0);
		break;
	}
	pthread_setcancelstate(cancel, NULL);
	errno = saved;
}
