/*
 * fastpath.c - the engine's half of the fast path: where a call lands when the
 * thread's mode word is not IDLE (first call of a thread, a policy is active,
 * the shim is re-entered) or when jemalloc returned NULL.
 *
 * Must never: allocate through the policy while the guard is raised, take a
 * lock on an ordinary call, or unwind.
 */
#include <errno.h>

#include "fastpath.h"
#include "slowpath.h"

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
	if (!t)
		return;
	struct gfp_entry_stats *s = &t->stats[req->entry];
	gfp_count(&s->calls, 1);
	if (p)
		gfp_count(&s->bytes, req->size);
	else
		gfp_count(&s->failures, 1);
}

/* One shape for both allocating kinds: `attempt` is mallocx or rallocx. */
static void *policy_call(struct gfp_req *req)
{
	enum gfp_tls_mode mode = gfp_tls.mode;
	/* IDLE here means the fast path's own mallocx just failed. */
	if (mode == GFP_TLS_IDLE)
		return errno = ENOMEM, NULL;
	if (gfp_tls.guard)
		return raw_alloc(req);
	if (mode == GFP_TLS_UNDECIDED && thread_enter() != GFP_TLS_POLICY)
		return raw_alloc(req);

	void *p = req->old ? rallocx(req->old, req->size, req->mallocx_flags)
			   : mallocx(req->size, req->mallocx_flags);
	if (unlikely(!p))
		p = gfp_slowpath(req);
	count(req, p);
	return p;
}

void *gfp_alloc_policy(enum gfp_entry entry, size_t size, int mallocx_flags, size_t align)
{
	struct gfp_req req = {
		.entry = entry, .mallocx_flags = mallocx_flags, .size = size, .align = align};
	return policy_call(&req);
}

void *gfp_realloc_policy(enum gfp_entry entry, void *old, size_t size)
{
	struct gfp_req req = {.entry = entry, .size = size, .old = old};
	return policy_call(&req);
}

void gfp_free_policy(enum gfp_entry entry, void *p, size_t size, int flags)
{
	if (gfp_tls.mode == GFP_TLS_UNDECIDED && !gfp_tls.guard)
		thread_enter();
	struct gfp_thread *t = gfp_tls.mode == GFP_TLS_POLICY && !gfp_tls.guard ? gfp_tls.thread
										   : NULL;
	if (t)
		gfp_count(&t->stats[entry].calls, 1);
	if (p == NULL)
		return;
	int saved = errno;
	if (size)
		sdallocx(p, size, flags);
	else
		dallocx(p, flags);
	errno = saved;
}
