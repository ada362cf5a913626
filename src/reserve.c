/*
 * reserve.c - per-thread reservations (doc/design.md, "Modules"): the
 * kernel has none (they were proposed for it, never merged).
 *
 * A reservation is accounting against the budget: gfp_reserve() waits, by
 * the flags' retry rules, until the budget can hold the bytes, then lowers
 * every watermark by them (budget.c). Only the reserving thread may go below
 * the lowered watermark, and only by what it draws:
 *   watermark (Chinner): a request draws only the bytes the budget could not
 *     give it, so the reserve is touched when there is no alternative;
 *   tokens (Morton): every request draws first, until the reserve is spent.
 * Drawn bytes are live memory; what is not drawn goes back at unreserve or
 * when the thread exits.
 *
 * reserve.thread gives every thread such a reserve, used only by requests
 * that would otherwise loop, and tops it up after frees when the budget has
 * room again. reserve.prefault backs a reservation with mapped, touched pages
 * in a jemalloc arena of its own (pool.c), which serves the thread when
 * jemalloc itself has no memory left.
 */
#include <errno.h>

#include "meaning.h"
#include "budget.h"
#include "budget_wait.h"
#include "pool.h"
#include "reserve.h"
#include "reserve_draw.h"

/* Statistics for the report; changed only by reservation events (the
 * draws are counted where they are made: reserve_draw.c; the pool's
 * serves in pool.c). */
static struct {
	uint64_t taken, failed;
	int64_t peak;
} rs;

static void note_peak(void)
{
	int64_t r = budget_reserved(), p = __atomic_load_n(&rs.peak, __ATOMIC_RELAXED);
	while (r > p && !__atomic_compare_exchange_n(&rs.peak, &p, r, true, __ATOMIC_RELAXED,
	                                             __ATOMIC_RELAXED))
		;
}

/* ------------------------------------------------------------------------
 * Taking and giving back (reserve_take.c runs the request)
 * ---------------------------------------------------------------------- */

/* slowpath_attempt() for a reservation request: the budget's part, then the
 * prefaulted pool's. Returns a non-NULL token on success. */
void *reserve_attempt(struct gfp_req *req, gfp_t f)
{
	static char taken;
	struct gfp_thread *t = gfp_tls.thread;
	int64_t got = 0;
	if (gfp_budget_on && budget_reserve(req, f, &got) != 0)
		return NULL;
	if (gfp_policy.reserve_prefault && pool_add(&t->pool, req->size) != 0) {
		if (got)
			budget_unreserve(&got);
		req->why = GFP_WHY_REAL;
		return NULL;
	}
	t->resv_left += got; /* only this thread draws from it: no lock needed to add */
	return &taken;
}

void reserve_count_take(bool taken)
{
	if (!taken) {
		__atomic_add_fetch(&rs.failed, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&rs.taken, 1, __ATOMIC_RELAXED);
	note_peak();
}

static void give_back(struct gfp_thread *t, bool thread_reserve_too)
{
	if (t->resv_left)
		budget_unreserve(&t->resv_left);
	if (thread_reserve_too && t->thread_left)
		budget_unreserve(&t->thread_left);
	t->exact_only = false;
	t->resv_held = false;
	/* reserve.thread's prefaulted bytes share the pool: kept until exit. */
	if (t->pool && (thread_reserve_too || !t->thread_want))
		pool_release(&t->pool);
}

void reserve_release(void)
{
	struct gfp_thread *t = gfp_tls.mode == GFP_TLS_POLICY ? gfp_tls.thread : NULL;
	if (!t || !t->resv_held)
		return;
	gfp_tls.guard++;
	give_back(t, false);
	gfp_tls.guard--;
	/* Other threads may be waiting for what was reserved. */
	if (__atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST))
		budget_wait_wake();
}

/* ------------------------------------------------------------------------
 * reserve.thread
 * ---------------------------------------------------------------------- */

void reserve_thread_start(struct gfp_thread *t)
{
	t->resv_left = t->thread_left = 0;
	t->exact_only = t->resv_held = false;
	t->pool = NULL;
	t->thread_want = (int64_t)gfp_policy.reserve_thread;
	if (!t->thread_want)
		return;
	if (gfp_budget_on)
		budget_reserve_upto(&t->thread_left, t->thread_want);
	if (gfp_policy.reserve_prefault)
		pool_add(&t->pool, (size_t)t->thread_want);
	note_peak();
}

void reserve_thread_exit(struct gfp_thread *t)
{
	if (t->resv_left || t->thread_left || t->pool) {
		give_back(t, true);
		if (__atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST))
			budget_wait_wake();
	}
}

/* After a free: top reserve.thread up again once the budget clearly has
 * room (the estimate first, so a free near the watermark takes no lock). */
void reserve_refill(struct gfp_thread *t)
{
	if (!budget_clearly_fits(t->thread_want - t->thread_left))
		return;
	budget_reserve_upto(&t->thread_left, t->thread_want);
}

/* Would this request loop in the slow path (small KERNEL, NOFS, NOFAIL)? */
bool reserve_would_loop(const struct gfp_req *req)
{
	gfp_t f = req->gfp;
	if (!(f & GFP_DIRECT_RECLAIM_BIT) || req->reserve)
		return false;
	if (f & GFP_NOFAIL)
		return true;
	return !(f & (GFP_NORETRY | GFP_RETRY_MAYFAIL)) && req->size <= gfp_policy.costly;
}

/* Whether the pool may serve this request: the thread holds a prefaulted
 * reservation, or reserve.thread's pool and the request would loop. */
bool reserve_pool_may_serve(const struct gfp_thread *t, const struct gfp_req *req)
{
	return t && t->pool && !req->reserve && (t->resv_held || req->may_draw_thread);
}

void reserve_report(struct gfp_buf *b)
{
	struct reserve_draws d = reserve_draws();
	gfp_buf_printf(b,
	               ",\"reserve\":{\"taken\":%llu,\"failed\":%llu,\"draws\":%llu,\"drawn\":%llu,"
	               "\"thread_draws\":%llu,\"pool_serves\":%llu,\"reserved_now\":%lld,"
	               "\"peak\":%lld}",
	               (unsigned long long)rs.taken, (unsigned long long)rs.failed,
	               (unsigned long long)d.draws, (unsigned long long)d.drawn,
	               (unsigned long long)d.thread_draws, (unsigned long long)pool_serves(),
	               (long long)budget_reserved(), (long long)rs.peak);
}
