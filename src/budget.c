/*
 * budget.c - the memory budget (limit=): live usable bytes against
 * watermarks, and the wait queue of requests under pressure.
 *
 * No shared read-modify-write on an ordinary call: each thread keeps a delta
 * of what it charged and released, and folds it into the shared count when it
 * passes one batch. A charge is accepted locally while the shared count plus
 * every thread's largest possible unfolded delta stays under the lowest
 * watermark; closer to the limit the charge is decided exactly, under a lock,
 * against the sum of every thread's delta. Frees under pressure fold at once
 * and wake the waiters.
 *
 * Watermarks (kernel-semantics.md §2): ordinary requests may fill up to
 * limit - min_free; HIGH may use half of min_free, ATOMIC (HIGH without direct
 * reclaim) 5/8, NOWAIT none, MEMALLOC all of it.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <jemalloc/jemalloc.h>

#include "internal.h"

static int64_t folded;	 /* atomic: live bytes folded in from the threads */
static int64_t limit_b;	 /* 0: no budget */
static int64_t min_free_b;
static int64_t batch;
static pthread_mutex_t exact_lock = PTHREAD_MUTEX_INITIALIZER;

/* The wait queue: a generation counter bumped by frees under pressure. */
static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wait_cond;
static int waiters;	   /* atomic: requests inside the slow path */
static uint64_t free_gen; /* atomic */

static void init_cond(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&wait_cond, &a);
	pthread_condattr_destroy(&a);
}

void budget_init(void)
{
	init_cond();

	limit_b = (int64_t)gfp_policy.limit;
	if (!limit_b)
		return;
	min_free_b = (int64_t)gfp_policy.min_free;
	if (!gfp_policy.set[GFP_K_min_free] || min_free_b == 0) {
		min_free_b = limit_b / 100;
		if (min_free_b < 64 * 1024)
			min_free_b = 64 * 1024;
	}
	if (min_free_b > limit_b / 2)
		min_free_b = limit_b / 2;
	batch = limit_b / 1024;
	if (batch < 4096)
		batch = 4096;
	if (batch > 64 * 1024)
		batch = 64 * 1024;
}

bool budget_enabled(void)
{
	return limit_b != 0;
}

int64_t budget_limit(void)
{
	return limit_b;
}

int64_t budget_watermark(gfp_t f)
{
	if (!limit_b)
		return INT64_MAX;
	if ((f & GFP_MEMALLOC) && !(f & GFP_NOMEMALLOC))
		return limit_b;
	int64_t usable = 0;
	if (f & GFP_HIGH) {
		usable = min_free_b / 2; /* ALLOC_MIN_RESERVE halves min */
		if (!(f & GFP_DIRECT_RECLAIM_BIT))
			usable += min_free_b / 8; /* ALLOC_NON_BLOCK: another quarter of it */
	}
	return limit_b - min_free_b + usable;
}

/* Live bytes exactly: the shared count plus every thread's unfolded delta. */
int64_t budget_live(void)
{
	return __atomic_load_n(&folded, __ATOMIC_RELAXED) + thread_sum_deltas();
}

static void fold(struct gfp_thread *t)
{
	int64_t d = __atomic_exchange_n(&t->delta, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&folded, d, __ATOMIC_RELAXED);
}

bool budget_charge(size_t usize, gfp_t f)
{
	if (!limit_b || usize == 0)
		return true;
	struct gfp_thread *t = gfp_tls.thread;
	int64_t n = (int64_t)usize;
	if (likely(t && n <= batch)) {
		int64_t d = __atomic_load_n(&t->delta, __ATOMIC_RELAXED) + n;
		int64_t slack = 2 * batch * (int64_t)thread_count();
		int64_t est = __atomic_load_n(&folded, __ATOMIC_RELAXED) + slack + n;
		if (est <= limit_b - min_free_b) {
			__atomic_store_n(&t->delta, d, __ATOMIC_RELAXED);
			if (d > batch)
				fold(t);
			return true;
		}
	}
	/* Near the watermark: decide exactly. */
	bool ok;
	pthread_mutex_lock(&exact_lock);
	if (t)
		fold(t);
	ok = budget_live() + n <= budget_watermark(f);
	if (ok)
		__atomic_add_fetch(&folded, n, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&exact_lock);
	return ok;
}

void budget_uncharge(size_t usize)
{
	if (!limit_b || usize == 0)
		return;
	struct gfp_thread *t = gfp_tls.thread;
	int64_t n = (int64_t)usize;
	if (t) {
		int64_t d = __atomic_load_n(&t->delta, __ATOMIC_RELAXED) - n;
		__atomic_store_n(&t->delta, d, __ATOMIC_RELAXED);
		if (d < -batch || __atomic_load_n(&waiters, __ATOMIC_RELAXED))
			fold(t);
	} else {
		__atomic_sub_fetch(&folded, n, __ATOMIC_RELAXED);
	}
}

/* A thread that exits hands its delta over. */
void budget_thread_exit(struct gfp_thread *t)
{
	fold(t);
}

/* ------------------------------------------------------------------------
 * Waiting for memory
 * ---------------------------------------------------------------------- */

void budget_waiter_enter(void)
{
	__atomic_add_fetch(&waiters, 1, __ATOMIC_SEQ_CST);
}

void budget_waiter_exit(void)
{
	__atomic_sub_fetch(&waiters, 1, __ATOMIC_SEQ_CST);
}

uint64_t budget_free_gen(void)
{
	return __atomic_load_n(&free_gen, __ATOMIC_SEQ_CST);
}

/* Called after every free under a policy: cheap unless someone waits. */
void budget_wake_waiters(void)
{
	if (likely(!__atomic_load_n(&waiters, __ATOMIC_SEQ_CST)))
		return;
	/* Memory this thread caches is no use to the waiter: hand it back. */
	gfp_tls.guard++;
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	gfp_tls.guard--;
	pthread_mutex_lock(&wait_lock);
	__atomic_add_fetch(&free_gen, 1, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&wait_cond);
	pthread_mutex_unlock(&wait_lock);
}

/* Sleeps up to `ms`, or until a free after generation `seen`. */
void budget_wait(uint64_t seen, uint64_t ms)
{
	if (ms == 0)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&wait_lock);
	while (__atomic_load_n(&free_gen, __ATOMIC_SEQ_CST) == seen) {
		if (pthread_cond_timedwait(&wait_cond, &wait_lock, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&wait_lock);
}

void budget_atfork_child(void)
{
	pthread_mutex_init(&exact_lock, NULL);
	pthread_mutex_init(&wait_lock, NULL);
	init_cond();
	__atomic_store_n(&waiters, 0, __ATOMIC_RELAXED);
}
