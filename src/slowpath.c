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

#define NOFAIL_MIN_RESERVE GFP_HIGH /* NOFAIL's last resort: ALLOC_MIN_RESERVE */

static bool costly(const struct gfp_req *req)
{
	/* A reservation is many small blocks, not one of its size. */
	return !req->reserve && req->size > gfp_policy.costly;
}

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
		if (!s->req->site)
			s->req->site = site_of_caller();
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
	 * failure they are the first thing to give back. */
	return reclaim_run(s->req->gfp, want, s->req->why == GFP_WHY_REAL);
}

enum retry { RETRY, FAIL, MAY_OOM };

/* should_reclaim_retry and the early exits around it. */
static enum retry slow_should_retry(struct gfp_slow *s, bool progress, const char **why)
{
	gfp_t f = s->req->gfp;
	if (progress && !costly(s->req))
		s->no_progress = 0; /* only order <= 3 resets the count */
	else
		s->no_progress++;
	if (f & GFP_NOFAIL)
		/* Retried forever; small ones still reach the OOM step. */
		return s->no_progress >= (unsigned)gfp_policy.retries && !costly(s->req) ? MAY_OOM
		                                                                         : RETRY;
	if (f & GFP_NORETRY) {
		*why = "NORETRY: one round of reclaim did not help";
		return FAIL;
	}
	if (costly(s->req) && !(f & GFP_RETRY_MAYFAIL)) {
		*why = "costly size: the kernel gives up after one round above order 3";
		return FAIL;
	}
	if (s->no_progress < (unsigned)gfp_policy.retries)
		return RETRY;
	if (f & GFP_RETRY_MAYFAIL) {
		*why = "RETRY_MAYFAIL: no progress in the allowed rounds";
		return FAIL;
	}
	return MAY_OOM; /* too small to fail: loop, or the OOM step */
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
	if (gfp_profile_on && s.rounds)
		profile_slow(req, s.rounds, gfp_now_ns() - s.start_ns);
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
	if (!(f & GFP_DIRECT_RECLAIM_BIT))
		/* NOWAIT/ATOMIC already tried their reserve; NOFAIL cannot help. */
		return nopage(sp, "cannot reclaim (NOWAIT/ATOMIC)");

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
		enum retry r = slow_should_retry(sp, freed != 0, &why);
		if (r == FAIL)
			break;
		if (r == MAY_OOM) {
			if (!(f & GFP_FS_BIT)) {
				/* 3.19 failed !__GFP_FS here; cc87317726f8 restored the loop. */
				if (gfp_policy.nofs_fail && !(f & GFP_NOFAIL)) {
					why =
					    "NOFS/NOIO without progress (nofs_fail=1, Linux 3.19)";
					break;
				}
			} else {
				enum oom_result o = oom_step(sp);
				if (o == OOM_GIVE_UP && !(f & GFP_NOFAIL)) {
					why = "the OOM step gave up (oom=fail)";
					break;
				}
				if (o == OOM_PROGRESS)
					sp->no_progress = 0;
			}
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
