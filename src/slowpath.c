/*
 * slowpath.c - what a request does under memory pressure, in the order of the
 * kernel's __alloc_pages_slowpath (mm/page_alloc.c), written out in slowpath():
 * wake kswapd, reclaim, attempt, retry decision, OOM step, wait. decide.c
 * decides each step as a pure function of what this file observed; this
 * file strings the steps together and acts. Every exit says why.
 *
 * Pressure means the first attempt failed: the budget's watermark would be
 * passed, or jemalloc itself returned NULL (e.g. under ulimit -v). Must never
 * hold a shim lock across a shrinker, a wait or an unwind.
 */
#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <pthread.h>

#include "internal.h"
#include "clock.h"
#include "budget_wait.h"
#include "cgroup.h"
#include "kswapd.h"
#include "vmstat.h"
#include "path.h"
#include "pool.h"

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
void *slowpath_attempt(struct gfp_req *req, gfp_t f)
{
	if (unlikely(req->reserve))
		return reserve_attempt(req, f);
	if (unlikely(req->mapping))
		return budget_direct_attempt(req, f); /* no injection point */
	if (unlikely(gfp_meaning.inject) && inject_should_fail(req, true)) {
		req->why = GFP_WHY_INJECT;
		return NULL;
	}
	if (!gfp_budget_on)
		return attempt_jemalloc(req);
	struct budget_exact x;
	switch (budget_begin(req, f, &x)) {
	case BUDGET_FITS:
		return attempt_jemalloc(req);
	case BUDGET_REFUSED:
		return NULL;
	case BUDGET_LOCKED: /* allocated under the decision's lock */
		break;
	}
	void *p = attempt_jemalloc(req);
	budget_end(req, &x, p);
	return p;
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
	cgroup_direct_reclaimed(s->req, freed);
	kswapd_direct_reclaimed(freed);
	return freed;
}

/* The request and the policy's knobs, as decide.c reads them: it reads
 * nothing else but what the loop below observes each round. */
static struct gfp_retry_in retry_in(const struct gfp_slow *s, gfp_t f, bool in_reclaim)
{
	return (struct gfp_retry_in){
	    .flags = f,
	    .size = s->req->size,
	    .reserve = s->req->reserve,
	    .in_reclaim = in_reclaim,
	    .costly = (size_t)gfp_policy.costly,
	    .retries = (unsigned)gfp_policy.retries,
	    .nofs_fail = gfp_policy.nofs_fail,
	    .oom = (enum gfp_oom_action)gfp_policy.oom,
	    .memcg = cgroup_charge_failed(s->req),
	};
}

/* should_reclaim_retry's zone check: would the request pass its watermark
 * if everything reclaimable were reclaimed? Only a budget has a watermark
 * to compare with; under a real ENOMEM or an injection, reclaim may help. */
static bool could_reach(const struct gfp_req *req, gfp_t f)
{
	if (req->why != GFP_WHY_BUDGET || reclaim_may_free_more(f))
		return true;
	return budget_live() + (int64_t)req->size <= budget_watermark(f);
}

/* try_charge_memcg's force: the memory, past the cgroup's limit (a
 * forced charge that no round of reclaim counted raises max now). */
static void *force(struct gfp_slow *s)
{
	if (!s->rounds)
		vmstat_memcg_event(GFP_MEMCG_MAX);
	return attempt_jemalloc(s->req);
}

static const char force_failed[] =
    "memory.max: charged past the limit, but the allocation itself failed";

static void *slowpath(struct gfp_req *req, struct gfp_slow *sp);

/* malloc is no cancellation point (POSIX), but the slow path waits on a
 * condition variable and writes its warnings, which are: a thread
 * cancelled there would unwind out of malloc with the wait lock held and
 * the guard raised. So cancellation waits until the request is decided. */
void *slowpath_run(struct gfp_req *req)
{
	struct gfp_slow s = {.req = req, .start_ns = gfp_now_ns()};
	int cancel_state;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	void *p = slowpath(req, &s);
	pthread_setcancelstate(cancel_state, NULL);
	if (s.rounds) { /* a direct-reclaim stall */
		uint64_t ns = gfp_now_ns() - s.start_ns;
		vmstat_stall(ns);
		if (gfp_meaning.profile)
			profile_slow(req, s.rounds, ns);
	}
	return p;
}

static void *slowpath(struct gfp_req *req, struct gfp_slow *sp)
{
	gfp_t f = context_resolve(req);
	sp->next_canary_ms = gfp_policy.canary_ms;

	if (!gfp_meaning.slowpath && !req->explicit_flags) {
		/* Only watching (stats, records): jemalloc's answer, unchanged. */
		errno = ENOMEM;
		return NULL;
	}
	bool in_reclaim = gfp_tls.in_reclaim != 0; /* PF_MEMALLOC: a shrinker's, a notifier's */
	if (!req->reserve)
		canary_misuse(sp, in_reclaim, decide_scope_nofail_waits(f, gfp_tls.scope));
	struct gfp_retry_in in = retry_in(sp, f, in_reclaim);
	const char *why;
	kswapd_wake_all(f); /* wake_all_kswapds, before anything may fail */
	enum gfp_retry entry = decide_slow_entry(&in, &why);
	if (entry == GFP_RETRY_FAIL)
		return nopage(sp, why);

	void *p = NULL;
	int saved_errno = errno; /* a success leaves errno as the caller had it */
	if (entry == GFP_RETRY_FORCE) {
		if ((p = force(sp)) != NULL) {
			errno = saved_errno;
			return p;
		}
		return nopage(sp, force_failed);
	}
	struct gfp_thread *t = gfp_tls.thread;
	if (t && (t->thread_left > 0 || t->pool) && reserve_would_loop(req)) {
		/* reserve.thread: what would loop is served from the reserve. */
		req->may_draw_thread = true;
		if ((p = slowpath_attempt(req, f)) != NULL) {
			errno = saved_errno;
			return p;
		}
	}

	/* The rounds (the retry: label). Each ends in memory (p), in a
	 * failure that says why, or in a wait for a free. */
	struct gfp_retry_out out;
	budget_waiter_enter();
	for (;;) {
		uint64_t gen = budget_wait_gen(); /* frees seen when the round began */
		kswapd_wake_all(req->gfp);
		in.rounds = ++sp->rounds;
		in.no_progress = sp->no_progress;
		in.victim = oom_is_victim();
		/* PF_MEMALLOC does not recurse into reclaim. */
		size_t freed = in.in_reclaim ? 0 : slow_reclaim(sp);
		gfp_t af = decide_attempt_flags(in.flags, in.in_reclaim, in.victim);
		if ((p = slowpath_attempt(req, af)) != NULL)
			break; /* got the memory */
		in.progress = freed != 0;
		in.could_reach = in.in_reclaim || could_reach(req, af);
		enum gfp_retry r = decide_retry_decide(&in, &out);
		sp->no_progress = out.no_progress;
		if (r == GFP_RETRY_OOM) {
			in.no_progress = out.no_progress;
			r = decide_retry_after_oom(&in, oom_step(sp), &out);
			sp->no_progress = out.no_progress;
		}
		if (r == GFP_RETRY_FORCE) {
			if ((p = force(sp)) == NULL)
				why = force_failed;
			break; /* memcg: charged past the limit */
		}
		/* nopage's ALLOC_MIN_RESERVE try, or NOFAIL's with no watermarks
		 * after the OOM step, when it reaches deeper than the round's. */
		if (decide_extra_attempt(out.attempt, af) &&
		    (p = slowpath_attempt(req, out.attempt)) != NULL)
			break; /* got the memory from deeper in the reserve */
		if (r == GFP_RETRY_FAIL) {
			why = out.why;
			break; /* nopage: decide.c said why */
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
