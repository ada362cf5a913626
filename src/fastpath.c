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
 */
#include <errno.h>

#include "fastpath.h"

/* Calls made while the shim itself is working (logging, init, libc on our
 * behalf), before the configuration is readable, or from a thread without a
 * policy: jemalloc's answer, with libc's errno. */
static void *raw_alloc(struct gfp_req *req)
{
	void *p = req->old ? rallocx(req->old, req->size, req->mallocx_flags)
			   : mallocx(req->size, req->mallocx_flags);
	if (unlikely(!p))
		errno = ENOMEM;
	return p;
}

static void count(struct gfp_req *req, const void *p)
{
	struct gfp_thread *t = gfp_tls.thread;
	if (!t || !gfp_policy.stats)
		return;
	struct gfp_entry_stats *s = &t->stats[req->entry];
	gfp_count(&s->calls, 1);
	if (p)
		gfp_count(&s->bytes, req->size);
	else
		gfp_count(&s->failures, 1);
}

static void *policy_call(struct gfp_req *req, bool explicit_flags)
{
	enum gfp_tls_mode mode = gfp_tls.mode;
	/* IDLE without flags: the fast path's own mallocx just failed. */
	if (mode == GFP_TLS_IDLE && !explicit_flags)
		return errno = ENOMEM, NULL;
	if (gfp_tls.guard)
		return raw_alloc(req);
	if (mode == GFP_TLS_UNDECIDED) {
		mode = thread_enter();
		if (mode == GFP_TLS_UNDECIDED || (mode == GFP_TLS_IDLE && !explicit_flags))
			return raw_alloc(req);
	}

	req->gfp = context_of(req->gfp);
	if (gfp_tls.in_reclaim && !(req->gfp & GFP_NOMEMALLOC))
		req->gfp |= GFP_MEMALLOC; /* a shrinker's own allocations: PF_MEMALLOC */
	void *p = gfp_attempt(req, req->gfp);
	if (unlikely(!p))
		p = gfp_slowpath(req);
	count(req, p);
	return p;
}

void *gfp_alloc_policy(enum gfp_entry entry, size_t size, int mallocx_flags, size_t align)
{
	struct gfp_req req = {
		.entry = entry, .mallocx_flags = mallocx_flags, .size = size, .align = align};
	return policy_call(&req, false);
}

void *gfp_realloc_policy(enum gfp_entry entry, void *old, size_t size)
{
	struct gfp_req req = {.entry = entry, .size = size, .old = old};
	return policy_call(&req, false);
}

void *gfp_alloc_flags(enum gfp_entry entry, void *old, size_t size, size_t align, gfp_t flags)
{
	int mflags = (align ? MALLOCX_ALIGN(align) : 0) | ((flags & GFP_ZERO) ? MALLOCX_ZERO : 0);
	struct gfp_req req = {.entry = entry,
			      .mallocx_flags = mflags,
			      .size = size ? size : 1,
			      .align = align,
			      .old = old,
			      .gfp = flags & ~GFP_ZERO};
	/* Explicit flags of 0 mean "the default", like an ordinary malloc. */
	return policy_call(&req, true);
}

void gfp_free_policy(enum gfp_entry entry, void *p, size_t size, int flags)
{
	if (gfp_tls.mode == GFP_TLS_UNDECIDED && !gfp_tls.guard)
		thread_enter();
	bool policy = gfp_tls.mode == GFP_TLS_POLICY && !gfp_tls.guard;
	struct gfp_thread *t = policy ? gfp_tls.thread : NULL;
	if (t && gfp_policy.stats)
		gfp_count(&t->stats[entry].calls, 1);
	if (p == NULL)
		return;
	int saved = errno;
	size_t usize = policy && budget_enabled() ? sallocx(p, 0) : 0;
	if (size)
		sdallocx(p, size, flags);
	else if (flags)
		dallocx(p, flags);
	else
		gfp_je_free(p);
	if (policy) {
		budget_uncharge(usize);
		budget_wake_waiters();
	}
	errno = saved;
}
