/*
 * slowpath.c - what a request does under memory pressure, in the order of the
 * kernel's __alloc_pages_slowpath (mm/page_alloc.c): reclaim, attempt, retry
 * decision, OOM step, wait, canary. Every exit says why.
 *
 * Pressure means the first attempt failed: the budget's watermark would be
 * passed, or jemalloc itself returned NULL (e.g. under ulimit -v). Must never
 * hold a shim lock across a shrinker, a wait or an unwind.
 */
#include <errno.h>
#include <pthread.h>

#include "fastpath.h"
#include "cgroup.h"
#include "kswapd.h"

#define NOFAIL_MIN_RESERVE GFP_HIGH /* NOFAIL's last resort: ALLOC_MIN_RESERVE */

static void *attempt_jemalloc(struct gfp_req *req)
{
	void *p;
	struct gfp_thread *t = gfp_tls.thread;
	/* tokens: a prefaulted reservation serves its thread first. */
	if (unlikely(t && t->pool) && gfp_policy.reserve_mode == GFP_RESERVE_TOKENS &&
	    reserve_pool_may_serve(t, req) && (p = pool_alloc(t->pool, req)))
		return p;
	if (req->old)
		p = rallocx(req->old, req->size, req->mallocx_flags);
	else if (req->mallocx_flags)
		p = mallocx(req->size, req->mallocx_flags);
	else
		p = gfp_je_malloc(req->size);
	if (unlikely(!p) && reserve_pool_may_serve(t, req))
		p = pool_alloc(t->pool, req); /* jemalloc itself failed: the pool */
	if (unlikely(!p))
		req->why = GFP_WHY_REAL;
	return p;
}

/* One attempt: get_page_from_freelist against the watermark of `f`. */
void *gfp_attempt(struct gfp_req *req, gfp_t f)
{
	if (unlikely(req->reserve))
		return reserve_attempt(req, f);
	if (unlikely(gfp_inject_on) && inject_should_fail(req, true)) {
		req->why = GFP_WHY_INJECT;
		return NULL;
	}
	if (!gfp_budget_on)
		return attempt_jemalloc(req);
	return budget_attempt(req, f, attempt_jemalloc);
}

static void *nopage(struct gfp_slow *s, const char *reason)
{
	if (records_on()) {
		struct gfp_frame frames[24];
		int n = unwind_capture(frames, 24);
		char extra[256];
		gfp_snprintf(extra, sizeof(extra), "\"reason\":\"%s\",\"rounds\":%u", reason,
		             s->rounds);
		if (!s->req->path)
			s->req->path = path_of_caller();
		record_event("failure", s->req, frames, n, extra);
	}
	canary_warn_alloc(s, reason);
	errno = ENOMEM;
	return NULL;
}

/* One round of reclaim: what it freed, 0 for no progress. */
static size_t slow_reclaim(struct gfp_slow *s)
{
	/* Ask the shrinkers for what is missing, not only for the request. */
	size_t want = s->req->size;
	if (s->req->why == GFP_WHY_BUDGET) {
		int64_t short_by = budget_live() + (int64_t)want - budget_watermark(s->req->gfp);
		if (short_by > (int64_t)want)
			want = (size_t)short_by;
	}
	/* Under a budget jemalloc's dirty pages do not count; for a real
	 * failure they are the first thing to give back, and under
	 * limit=cgroup they are in the cgroup's usage. */
	size_t freed = reclaim_run(s->req->gfp, want, s->req->why == GFP_WHY_REAL || gfp_cgroup_on);
	cgroup_after_reclaim();
	return freed;
}

/* The retry decision's inputs for this round: what the request is, what
 * reclaim did, and the policy's knobs; decide.c reads nothing else. */
static struct gfp_retry_in retry_in(const struct gfp_slow *s, gfp_t f, bool progress)
{
	return (struct gfp_retry_in){
	    .flags = f,
	    .size = s->req->size,
	    .reserve = s->req->reserve,
	    .progress = progress,
	    .rounds = s->rounds,
	    .no_progress = s->no_progress,
	    .costly = (size_t)gfp_policy.costly,
	    .retries = (unsigned)gfp_policy.retries,
	    .nofs_fail = gfp_policy.nofs_fail,
	    .oom = (enum gfp_oom_action)gfp_policy.oom,
	};
}

static void *slowpath(struct gfp_req *req, struct gfp_slow *sp);

/* malloc is no cancellation point (POSIX), but the slow path waits on a
 * condition variable and writes its warnings, which are: a thread
 * cancelled there would unwind out of malloc with the wait lock held and
 * the guard raised. So cancellation waits until the request is decided. */
void *gfp_slowpath(struct gfp_req *req)
{
	struct gfp_slow s = {.req = req, .start_ns = gfp_now_ns()};
	int cancel_state;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	void *p = slowpath(req, &s);
	pthread_setcancelstate(cancel_state, NULL);
	if (s.rounds) { /* a direct-reclaim stall */
		uint64_t ns = gfp_now_ns() - s.start_ns;
		vmstat_stall(ns);
		if (gfp_profile_on)
			profile_slow(req, s.rounds, ns);
	}
	return p;
}

static void *slowpath(struct gfp_req *req, struct gfp_slow *sp)
{
	gfp_t f = context_resolve(req);
	sp->next_canary_ms = gfp_policy.canary_ms;

	if (!gfp_slowpath_on && !req->explicit_flags) {
		/* Only watching (stats, records): jemalloc's answer, unchanged. */
		errno = ENOMEM;
		return NULL;
	}
	if (gfp_tls.in_reclaim)
		/* A shrinker allocating: PF_MEMALLOC never recurses into reclaim. */
		return nopage(sp, "allocation from inside reclaim");
	if (!req->reserve)
		canary_misuse(sp);
	struct gfp_retry_in in = retry_in(sp, f, false);
	struct gfp_retry_out out;
	if (gfp_retry_decide(&in, &out) == GFP_RETRY_FAIL)
		return nopage(sp, out.why);

	void *p = NULL;
	int saved_errno = errno; /* a success leaves errno as the caller had it */
	struct gfp_thread *t = gfp_tls.thread;
	if (t && (t->thread_left > 0 || t->pool) && reserve_would_loop(req)) {
		/* reserve.thread: what would loop is served from the reserve. */
		req->may_draw_thread = true;
		if ((p = gfp_attempt(req, f)) != NULL) {
			errno = saved_errno;
			return p;
		}
	}
	const char *why = NULL;
	budget_waiter_enter();
	for (;;) {
		uint64_t gen = budget_free_gen();
		sp->rounds++;
		size_t freed = slow_reclaim(sp);
		gfp_t attempt_flags = f;
		if ((f & GFP_NOFAIL) && sp->rounds > 1)
			attempt_flags |= NOFAIL_MIN_RESERVE;
		p = gfp_attempt(req, attempt_flags);
		if (p)
			break;
		in = retry_in(sp, f, freed != 0);
		enum gfp_retry r = gfp_retry_decide(&in, &out);
		sp->no_progress = out.no_progress;
		if (r == GFP_RETRY_OOM) {
			enum oom_result o = oom_step(sp);
			r = gfp_retry_after_oom(f, o, &out);
			sp->no_progress = out.no_progress;
		}
		if (r == GFP_RETRY_FAIL) {
			why = out.why;
			break;
		}
		canary_tick(sp);
		budget_wait(gen, gfp_policy.wait);
	}
	budget_waiter_exit();
	if (p) {
		errno = saved_errno;
		return p;
	}
	return nopage(sp, why);
}
