/*
 * fastpath.c - the engine's half of the fast path: where a call lands when the
 * thread's mode word is not IDLE (first call of a thread, a policy is active,
 * the shim is re-entered), when an idle mallocx returned NULL, or when the
 * caller gave explicit flags (gfp_malloc).
 *
 * Under a policy a request gets its context, one attempt against the budget
 * (get_page_from_freelist), and the slow path if that fails.
 * Must never: allocate through the policy while the guard is raised, take a
 * lock on an ordinary call, or unwind.
 *
 * Read from the top: an allocation's common case (fastpath_policy_alloc),
 * then each way out of it in the order it is tried; then realloc, explicit
 * flags and the profiled routes' entry; then frees, in the same order.
 */
#include <errno.h>

#include "internal.h"
#include "fastpath.h"
#include "budget_wait.h"
#include "junk.h"
#include "cgroup.h"
#include "cgroup_high.h"

static enum gfp_tls_mode enter(bool may_register);
static void *alloc_stashed(void *p);
static void *alloc_fast_tail(enum gfp_entry entry, size_t size, int mallocx_flags, size_t align,
                             uintptr_t caller, void *p, bool inject);
static void *alloc_general(enum gfp_entry entry, size_t size, int mallocx_flags, size_t align,
                           uintptr_t caller);
static void *policy_call(struct gfp_req *req, bool explicit_flags);
static void *idle_expired(struct gfp_req *req);
static void *raw_alloc(struct gfp_req *req);
static inline void count_totals(unsigned entry, size_t bytes, bool failed);
static void count(struct gfp_req *req, void *p);
static void free_other(enum gfp_entry entry, void *p, size_t size, int flags);
static void free_profiled(enum gfp_entry entry, void *p, size_t size, int flags);
static inline bool free_needs_more(void);
static void after_free(void);

/*
 * The common case under a policy: a plain thread, nothing counted per call,
 * nothing injected, and the request certainly fits the budget (or there is
 * none): jemalloc's attempt alone, the context resolved only if it fails.
 * The request waits in the thread's stash meanwhile, so that nothing is
 * live across jemalloc's call and this branch needs no stack frame.
 */
void *fastpath_policy_alloc(enum gfp_entry entry, size_t size, int mallocx_flags, size_t align,
                            uintptr_t caller)
{
	if (likely(fastpath_plain_thread() && gfp_meaning.plain &&
	           (!gfp_budget_on || budget_allowance_take(budget_charge(size, align))))) {
		/* The guard first: a signal handler that allocates meanwhile goes
		 * raw and leaves the stash alone. */
		gfp_tls.guard++;
		gfp_tls.stash = (struct gfp_stash){.size = size,
		                                   .align = align,
		                                   .caller = caller,
		                                   .mallocx_flags = mallocx_flags,
		                                   .entry = (unsigned)entry};
		void *p = mallocx_flags ? mallocx(size, mallocx_flags) : gfp_je_malloc(size);
		if (unlikely(p == NULL || gfp_meaning.profile))
			return alloc_stashed(p);
		/* stats=totals counts here, from the stash: the guard is still up. */
		if (gfp_policy.stats)
			count_totals(gfp_tls.stash.entry, gfp_tls.stash.size, false);
		gfp_tls.guard--;
		return p;
	}
	return alloc_general(entry, size, mallocx_flags, align, caller);
}

/* A thread's first call may be the process's first, before any constructor:
 * the configuration is read before the thread's mode is decided. */
static enum gfp_tls_mode enter(bool may_register)
{
	return init_ensure() ? thread_enter(may_register) : GFP_TLS_UNDECIDED;
}

/* The common case failed for real (p is NULL), or succeeded under
 * statistics: the request comes back from the stash for the rare end. */
static __attribute__((noinline)) void *alloc_stashed(void *p)
{
	struct gfp_stash s = gfp_tls.stash; /* taken while the guard is up */
	if (p && gfp_meaning.profile && profile_count_quick(p, &s)) {
		count_totals(s.entry, s.size, false);
		gfp_tls.guard--;
		return p;
	}
	gfp_tls.guard--;
	return alloc_fast_tail((enum gfp_entry)s.entry, s.size, s.mallocx_flags, s.align, s.caller,
	                       p, false);
}

/* alloc_fast_tail's answer for "injected": distinct from any pointer. */
static char injected_marker;
#define GFP_INJECTED ((void *)&injected_marker)

/* The rare ends of the fast branch below, with the request spelled out. */
static __attribute__((noinline)) void *alloc_fast_tail(enum gfp_entry entry, size_t size,
                                                       int mallocx_flags, size_t align,
                                                       uintptr_t caller, void *p, bool inject)
{
	struct gfp_req req = {.entry = entry,
	                      .mallocx_flags = mallocx_flags,
	                      .size = size,
	                      .align = align,
	                      .caller = caller};
	if (inject) {
		if (!inject_simple_fire(&req))
			return NULL; /* not injected after all: the caller allocates */
		errno = ENOMEM;
		req.why = GFP_WHY_INJECT;
		count(&req, NULL);
		return GFP_INJECTED;
	}
	if (!p) {
		req.why = GFP_WHY_REAL;
		p = slowpath_run(&req);
	}
	count(&req, p);
	return p;
}

/* Everything but the common case below, out of line. */
static __attribute__((noinline)) void *
alloc_general(enum gfp_entry entry, size_t size, int mallocx_flags, size_t align, uintptr_t caller)
{
	struct gfp_req req = {.entry = entry,
	                      .mallocx_flags = mallocx_flags,
	                      .size = size,
	                      .align = align,
	                      .caller = caller};
	if (unlikely(gfp_tls.countdown > 0))
		/* The fast path's own jemalloc call failed; no policy looks at
		 * it (idle, or fail.probability alone). */
		return errno = ENOMEM, NULL;
	if (unlikely(gfp_tls.mode == GFP_TLS_IDLE))
		return idle_expired(&req);
	/* Certainly fits (or no budget), fail.probability may inject: the
	 * draw first, then jemalloc's attempt alone. */
	if (fastpath_plain_thread() && gfp_meaning.inject_simple &&
	    (!gfp_budget_on || budget_allowance_take(budget_charge(size, align)) ||
	     budget_fast_ok(gfp_tls.thread, budget_charge(size, align)))) {
		if (inject_simple_candidate(caller)) {
			void *r =
			    alloc_fast_tail(entry, size, mallocx_flags, align, caller, NULL, true);
			if (r == GFP_INJECTED)
				return NULL;
		}
		void *p = mallocx_flags ? mallocx(size, mallocx_flags) : gfp_je_malloc(size);
		if (unlikely(!p || gfp_policy.stats))
			return alloc_fast_tail(entry, size, mallocx_flags, align, caller, p, false);
		return p;
	}
	return policy_call(&req, false);
}

/* The general path: every request that is not simply "policy mode, no
 * budget, no flags" (see fastpath_policy_alloc). */
static void *policy_call(struct gfp_req *req, bool explicit_flags)
{
	/* An IDLE thread arrives here only with explicit flags (gfp_malloc):
	 * its other calls go to idle_expired. */
	enum gfp_tls_mode mode = gfp_tls.mode;
	if (gfp_tls.guard || gfp_tls.exiting) /* past its exit: no policy */
		return raw_alloc(req);
	if (mode == GFP_TLS_UNDECIDED) {
		mode = enter(true);
		if (mode == GFP_TLS_IDLE && !explicit_flags)
			return idle_expired(req); /* the thread's first call counts too */
		if (mode == GFP_TLS_UNDECIDED)
			return raw_alloc(req);
	}

	if (unlikely(gfp_meaning.inject) && inject_should_fail(req, false)) {
		/* Injected at entry: fails at once, no retry, no report (the
		 * kernel's should_fail_alloc_page comes before any attempt). */
		errno = ENOMEM;
		req->why = GFP_WHY_INJECT;
		count(req, NULL);
		return NULL;
	}

	/* The context matters to the slow path and, near the watermark, to
	 * the budget (budget_begin resolves it there); far from pressure it
	 * is never looked at (GFP_RULES cost nothing then). */
	if (gfp_tls.in_reclaim) {
		context_resolve(req);
		if (!(req->gfp & GFP_NOMEMALLOC))
			req->gfp |= GFP_MEMALLOC; /* a shrinker's own allocations: PF_MEMALLOC */
	}
	if (gfp_meaning.profile && req->old)
		profile_before_realloc(req);
	size_t old_usable = junk_old_usable(req);
	void *p = slowpath_attempt(req, req->gfp);
	if (unlikely(!p))
		p = slowpath_run(req);
	if (p && gfp_policy.junk)
		junk_fill(req, p, old_usable);
	count(req, p);
	/* A realloc may have shrunk its block: a waiter tries again now. */
	if (req->old && p && unlikely(__atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED)))
		after_free();
	/* Charged past memory.high: the throttle, before the caller has it. */
	if (unlikely(gfp_memcg_over_high) && p)
		cgroup_high_handle(req);
	return p;
}

/* An IDLE thread whose countdown ran out: the next injection is due (only
 * fail.probability is set), gfp-ctl changed the policy, or the count merely
 * wrapped. */

static __attribute__((noinline)) void *idle_expired(struct gfp_req *req)
{
	/* gfp-ctl changed the policy: decide again. */
	if (unlikely(gfp_tls.decided_gen != __atomic_load_n(&gfp_policy_gen, __ATOMIC_ACQUIRE)) &&
	    !gfp_tls.guard && enter(true) == GFP_TLS_POLICY)
		return policy_call(req, false);
	if (gfp_meaning.armed_fast && !gfp_tls.exiting) {
		if (inject_countdown(req))
			return errno = ENOMEM, NULL;
	} else if (!gfp_exit_watched()) { /* else every call comes to raw_alloc */
		gfp_tls.countdown = INT64_MAX;
	}
	return raw_alloc(req);
}

/* Calls made while the shim itself is working (logging, init, libc on our
 * behalf), before the configuration is readable, or from a thread without a
 * policy: jemalloc's answer, with libc's errno.
 *
 * A thread past its exit still allocates and frees, in later key
 * destructors: the budget counted what it held then (exit_counted), and
 * hears of the rest here and in free_other, as jemalloc's counters of the
 * thread are no longer read; a counted block it reallocates leaves its
 * caller's counts like a freed one. */
static void *raw_alloc(struct gfp_req *req)
{
	bool profiled = gfp_meaning.profile && req->old;
	bool exited = unlikely(gfp_tls.exit_counted);
	if (unlikely(profiled))
		profile_before_realloc(req);
	int64_t before = exited && req->old ? (int64_t)sallocx(req->old, 0) : 0;
	void *p = req->old ? rallocx(req->old, req->size, req->mallocx_flags)
	                   : mallocx(req->size, req->mallocx_flags);
	if (unlikely(profiled))
		profile_after_realloc(req, p);
	if (exited && p)
		budget_exited_delta((int64_t)sallocx(p, 0) - before);
	if (unlikely(!p))
		errno = ENOMEM;
	return p;
}

/* stats=totals: one call of `entry`; an allocation's `bytes` (0 for a free),
 * or its failure. */
static inline void count_totals(unsigned entry, size_t bytes, bool failed)
{
	if (!gfp_tls.thread)
		return;
	struct gfp_entry_stats *s = &gfp_tls.stats[entry];
	gfp_count(&s->calls, 1);
	if (failed)
		gfp_count(&s->failures, 1);
	else if (bytes)
		gfp_count(&s->bytes, bytes);
}

static void count(struct gfp_req *req, void *p)
{
	if (!gfp_policy.stats)
		return;
	if (gfp_meaning.profile)
		profile_count(req, p);
	count_totals(req->entry, req->size, p == NULL);
}

void *fastpath_policy_realloc(enum gfp_entry entry, void *old, size_t size, uintptr_t caller)
{
	struct gfp_req req = {.entry = entry, .size = size, .old = old, .caller = caller};
	if (unlikely(gfp_tls.mode == GFP_TLS_IDLE))
		return idle_expired(&req);
	return policy_call(&req, false);
}

void *fastpath_alloc_flags(enum gfp_entry entry, void *old, size_t size, size_t align, gfp_t flags)
{
	int mflags = (align ? MALLOCX_ALIGN(align) : 0) | ((flags & GFP_ZERO) ? MALLOCX_ZERO : 0);
	struct gfp_req req = {.entry = entry,
	                      .mallocx_flags = mflags,
	                      .size = size ? size : 1,
	                      .align = align,
	                      .old = old,
	                      .gfp = flags & ~GFP_ZERO,
	                      .explicit_flags = true};
	/* Explicit flags of 0 mean "the default", like an ordinary malloc. */
	return policy_call(&req, true);
}

void *fastpath_profiled(void *p, enum gfp_entry entry, size_t size, int mallocx_flags, size_t align,
                        uintptr_t caller)
{
	/* policy_call's choice of who counts: not the shim itself, nor a
	 * thread past its exit, and a new thread once it is decided. */
	if (gfp_tls.guard || gfp_tls.exiting)
		return p;
	if (gfp_tls.mode == GFP_TLS_UNDECIDED)
		enter(true);
	if (gfp_tls.mode != GFP_TLS_POLICY)
		return p;
	struct gfp_req req = {.entry = entry,
	                      .mallocx_flags = mallocx_flags,
	                      .size = size ? size : 1,
	                      .align = align,
	                      .caller = caller};
	int saved = errno; /* a success leaves errno as jemalloc left it */
	count(&req, p);
	errno = saved;
	return p;
}

void fastpath_policy_free(enum gfp_entry entry, void *p, size_t size, int flags)
{
	if (unlikely(gfp_tls.mode != GFP_TLS_POLICY || gfp_tls.guard)) {
		free_other(entry, p, size, flags);
		return;
	}
	if (gfp_policy.stats) {
		if (unlikely(gfp_meaning.profile)) {
			free_profiled(entry, p, size, flags);
			return;
		}
		count_totals(entry, 0, false);
	}
	if (p == NULL)
		return;
	/* errno waits in the thread's block, so that nothing is live across the
	 * call; the guard keeps a signal handler's free from overwriting it. */
	gfp_tls.guard++;
	gfp_tls.saved_errno = *gfp_tls.errnop;
	fastpath_release(p, size, flags);
	*gfp_tls.errnop = gfp_tls.saved_errno;
	gfp_tls.guard--;
	if (free_needs_more())
		after_free();
}

/* stats=sites and paths: the block's site is looked up before jemalloc
 * forgets its size. */
static __attribute__((noinline)) void free_profiled(enum gfp_entry entry, void *p, size_t size,
                                                    int flags)
{
	count_totals(entry, 0, false);
	if (p == NULL)
		return;
	int *errnop = gfp_tls.errnop, saved = *errnop;
	profile_free(p);
	fastpath_release(p, size, flags);
	*errnop = saved;
	if (free_needs_more())
		after_free();
}

/* Frees from threads that are not (yet) under the policy, or from inside
 * the shim: jemalloc's free, nothing counted. */
static __attribute__((noinline)) void free_other(enum gfp_entry entry, void *p, size_t size,
                                                 int flags)
{
	int saved = errno; /* before thread_enter, which may map memory */
	if (gfp_tls.mode == GFP_TLS_UNDECIDED && !gfp_tls.guard &&
	    enter(false) == GFP_TLS_POLICY) {
		errno = saved;
		fastpath_policy_free(entry, p, size, flags);
		return;
	}
	if (p != NULL) {
		if (unlikely(gfp_meaning.profile))
			profile_free(p); /* the map keeps no entry of a freed block */
		if (unlikely(gfp_tls.exit_counted))
			budget_exited_delta(-(int64_t)sallocx(p, 0));
		fastpath_release(p, size, flags);
	}
	errno = saved;
}

/* Under a budget the next grant sees a free in jemalloc's counters; only a
 * waiter, or a reserve to top up, needs more done at once (after_free). */
static inline bool free_needs_more(void)
{
	return unlikely(__atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED) ||
	                gfp_policy.reserve_thread);
}

/* After a free under a budget or with waiters: what the common case of
 * fastpath_policy_free leaves out of line. */
static __attribute__((noinline)) void after_free(void)
{
	int saved = errno; /* free keeps errno: locks and wake-ups may not */
	if (gfp_budget_on) {
		struct gfp_thread *t = gfp_tls.thread;
		budget_after_free(t);
		if (unlikely(t && t->thread_left < t->thread_want))
			reserve_refill(t);
	}
	if (unlikely(__atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST)))
		budget_wait_wake();
	errno = saved;
}
