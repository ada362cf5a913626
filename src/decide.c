/*
 * decide.c - the retry decision of the slow path (should_reclaim_retry and
 * the early exits around it in mm/page_alloc.c), SPEC §4 steps 2 and 3.
 *
 * Pure: everything it reads is in its arguments, so the unit test can walk
 * SPEC §4's whole table in milliseconds. Must never read gfp_policy or the
 * thread-local state, and never log: slowpath.c does both.
 */
#include "decide.h"

enum gfp_retry gfp_retry_decide(const struct gfp_retry_in *in, struct gfp_retry_out *out)
{
	gfp_t f = in->flags;
	out->no_progress = in->no_progress;
	out->why = NULL;
	if (in->rounds == 0) {
		/* At entry: NOWAIT/ATOMIC already tried their reserve; NOFAIL
		 * cannot make them wait (kernel-semantics §3.9). */
		if (!(f & GFP_DIRECT_RECLAIM_BIT)) {
			out->why = "cannot reclaim (NOWAIT/ATOMIC)";
			return GFP_RETRY_FAIL;
		}
		return GFP_RETRY_LOOP;
	}
	/* A reservation is many small blocks, not one of its size. */
	bool costly = !in->reserve && in->size > in->costly;
	if (in->progress && !costly)
		out->no_progress = 0; /* only order <= 3 resets the count */
	else
		out->no_progress++;
	bool exhausted = out->no_progress >= in->retries;
	bool may_oom;
	if (f & GFP_NOFAIL) {
		/* Retried forever; small ones still reach the OOM step. */
		may_oom = exhausted && !costly;
	} else {
		if (f & GFP_NORETRY) {
			out->why = "NORETRY: one round of reclaim did not help";
			return GFP_RETRY_FAIL;
		}
		if (costly && !(f & GFP_RETRY_MAYFAIL)) {
			out->why = "costly size: the kernel gives up after one round above order 3";
			return GFP_RETRY_FAIL;
		}
		if (exhausted && (f & GFP_RETRY_MAYFAIL)) {
			out->why = "RETRY_MAYFAIL: no progress in the allowed rounds";
			return GFP_RETRY_FAIL;
		}
		may_oom = exhausted; /* too small to fail: loop, or the OOM step */
	}
	if (!may_oom)
		return GFP_RETRY_LOOP;
	if (!(f & GFP_FS_BIT)) {
		/* out_of_memory() makes progress without a kill for !__GFP_FS:
		 * 3.19 failed them here, cc87317726f8 restored the loop. */
		if (in->nofs_fail && !(f & GFP_NOFAIL)) {
			out->why = "NOFS/NOIO without progress (nofs_fail=1, Linux 3.19)";
			return GFP_RETRY_FAIL;
		}
		return GFP_RETRY_LOOP;
	}
	/* oom=wait: the step would do nothing, so it is not asked. */
	return in->oom == OOM_WAIT ? GFP_RETRY_LOOP : GFP_RETRY_OOM;
}

enum gfp_retry gfp_retry_after_oom(gfp_t flags, enum oom_result o, struct gfp_retry_out *out)
{
	out->why = NULL;
	if (o == OOM_PROGRESS)
		out->no_progress = 0; /* notifiers freed: as reclaim progress */
	if (o == OOM_GIVE_UP && !(flags & GFP_NOFAIL)) {
		out->why = "the OOM step gave up (oom=fail)";
		return GFP_RETRY_FAIL;
	}
	return GFP_RETRY_LOOP;
}
