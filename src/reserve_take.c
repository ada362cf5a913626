/*
 * reserve_take.c - gfp_reserve(): a reservation is a request of its own,
 * decided by the slow path like any other (with the flags' retry rules);
 * its attempt, which sets the bytes aside, is reserve.c's.
 */
#include <errno.h>

#include "budget.h"
#include "context.h"
#include "init.h"
#include "meaning.h"
#include "reserve.h"
#include "reserve_take.h"
#include "slowpath.h"
#include "thread_life.h"

static struct gfp_thread *reserve_thread(void)
{
	/* It may be the process's first call: the configuration first. */
	if (gfp_tls.mode == GFP_TLS_UNDECIDED && !gfp_tls.guard && init_ensure())
		thread_enter(true);
	return gfp_tls.mode == GFP_TLS_POLICY ? gfp_tls.thread : NULL;
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
		reserve_count_take(false);
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
		reserve_count_take(false);
		errno = ENOMEM;
		return -1;
	}
	t->resv_held = true;
	if (gfp_policy.reserve_mode == GFP_RESERVE_TOKENS && gfp_budget_on && t->resv_left > 0) {
		t->exact_only = true;
		gfp_tls.budget.allowance = 0; /* every request draws, under the lock */
	}
	reserve_count_take(true);
	return 0;
}
