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
#include "context.h"
#include "budget.h"
#include "budget_wait.h"
#include "reserve.h"
#include "thread_life.h"
#include "unwind.h"
#include "slowpath.h"
#include "site.h"
#include "path.h"
#include "records.h"

/* Statistics for the report; changed only by reservation events. */
static struct {
	uint64_t taken, failed, draws, drawn, thread_draws, pool_serves;
	int64_t peak;
} rs;

static struct gfp_thread *reserve_thread(void)
{
	if (gfp_tls.mode == GFP_TLS_UNDECIDED && !gfp_tls.guard)
		thread_enter(true);
	return gfp_tls.mode == GFP_TLS_POLICY ? gfp_tls.thread : NULL;
}

static void note_peak(void)
{
	int64_t r = budget_reserved(), p = __atomic_load_n(&rs.peak, __ATOMIC_RELAXED);
	while (r > p && !__atomic_compare_exchange_n(&rs.peak, &p, r, true, __ATOMIC_RELAXED,
	                                             __ATOMIC_RELAXED))
		;
}

/* ------------------------------------------------------------------------
 * Drawing (under the budget's exact lock)
 * ---------------------------------------------------------------------- */

/* How much of the reserve a request of `grow` bytes draws when the budget
 * has `room` bytes under its watermark. */
int64_t reserve_plan_draw(const struct gfp_thread *t, const struct gfp_req *req, int64_t grow,
                          int64_t room)
{
	int64_t avail = t->resv_left + (req->may_draw_thread ? t->thread_left : 0);
	if (avail <= 0 || grow <= 0 || req->reserve)
		return 0;
	/* Enough to end at or under the watermark (room < 0: drift left the
	 * budget over it); tokens draw the whole request even when it fits. */
	int64_t draw = grow - room;
	if (t->exact_only && draw < grow)
		draw = grow;
	if (draw <= 0)
		return 0;
	return draw < avail ? draw : avail;
}

/* Takes `draw` from the thread's reserves, gfp_reserve's first. */
int64_t reserve_commit_draw(struct gfp_thread *t, int64_t draw)
{
	int64_t from_resv = draw < t->resv_left ? draw : t->resv_left;
	t->resv_left -= from_resv;
	t->thread_left -= draw - from_resv;
	if (t->resv_left == 0)
		t->exact_only = false;
	return draw;
}

/* After the lock: count the draw; a draw that saved a request from failing
 * or looping is an event worth a record. */
void reserve_drawn(struct gfp_req *req, int64_t draw)
{
	struct gfp_thread *t = gfp_tls.thread;
	__atomic_add_fetch(&rs.draws, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&rs.drawn, (uint64_t)draw, __ATOMIC_RELAXED);
	if (req->may_draw_thread)
		__atomic_add_fetch(&rs.thread_draws, 1, __ATOMIC_RELAXED);
	if (t && t->exact_only)
		return; /* tokens: drawing is the normal case */
	if (records_on()) {
		struct gfp_frame frames[24];
		int n = unwind_capture(frames, 24);
		char extra[160];
		gfp_snprintf(extra, sizeof(extra),
		             "\"reserve\":\"%s\",\"drawn\":%lld,\"left\":%lld,\"thread_left\":%lld",
		             req->may_draw_thread ? "thread" : "reservation", (long long)draw,
		             t ? (long long)t->resv_left : 0LL,
		             t ? (long long)t->thread_left : 0LL);
		if (!req->path)
			req->path = path_of_caller();
		record_event("reserve", req, frames, n, extra);
	}
}

/* ------------------------------------------------------------------------
 * Taking and giving back
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

int reserve_take(size_t bytes, gfp_t flags)
{
	struct gfp_thread *t = reserve_thread();
	/* No policy, or nothing to reserve against: as without the shim. */
	if (!t || bytes == 0 || (!gfp_budget_on && !gfp_policy.reserve_prefault))
		return 0;
	/* Nesting adds: what the thread holds already counts against it. */
	if (bytes > (size_t)INT64_MAX ||
	    (gfp_budget_on && (int64_t)bytes > budget_capacity() - t->resv_left - t->thread_left)) {
		/* It could never be granted: waiting would only end in the OOM step
		 * (or, for NOFS, loop for ever on the thread's own reservation). */
		__atomic_add_fetch(&rs.failed, 1, __ATOMIC_RELAXED);
		errno = ENOMEM;
		return -1;
	}
	struct gfp_req req = {.entry = GFP_E_gfp_reserve,
	                      .size = bytes,
	                      .gfp = flags,
	                      .explicit_flags = true,
	                      .reserve = true,
	                      .caller = (uintptr_t)__builtin_return_address(0)};
	req.gfp = context_of(flags);
	req.ctx_resolved = true;
	void *ok = slowpath_attempt(&req, req.gfp);
	if (!ok)
		ok = slowpath_run(&req);
	if (!ok) {
		__atomic_add_fetch(&rs.failed, 1, __ATOMIC_RELAXED);
		errno = ENOMEM;
		return -1;
	}
	t->resv_held = true;
	if (gfp_policy.reserve_mode == GFP_RESERVE_TOKENS && gfp_budget_on && t->resv_left > 0) {
		t->exact_only = true;
		gfp_tls.budget.allowance = 0; /* every request draws, under the lock */
	}
	__atomic_add_fetch(&rs.taken, 1, __ATOMIC_RELAXED);
	note_peak();
	return 0;
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

void reserve_pool_served(void)
{
	__atomic_add_fetch(&rs.pool_serves, 1, __ATOMIC_RELAXED);
}

void reserve_report(struct gfp_buf *b)
{
	gfp_buf_printf(b,
	               ",\"reserve\":{\"taken\":%llu,\"failed\":%llu,\"draws\":%llu,\"drawn\":%llu,"
	               "\"thread_draws\":%llu,\"pool_serves\":%llu,\"reserved_now\":%lld,"
	               "\"peak\":%lld}",
	               (unsigned long long)rs.taken, (unsigned long long)rs.failed,
	               (unsigned long long)rs.draws, (unsigned long long)rs.drawn,
	               (unsigned long long)rs.thread_draws, (unsigned long long)rs.pool_serves,
	               (long long)budget_reserved(), (long long)rs.peak);
}
