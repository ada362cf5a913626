/*
 * decide.c - the slow path's decisions, copied from the kernel's
 * mm/page_alloc.c (__alloc_pages_slowpath, should_reclaim_retry,
 * __alloc_pages_may_oom, __gfp_pfmemalloc_flags), mm/oom_kill.c
 * (out_of_memory), include/linux/sched/mm.h (current_gfp_context) and, for
 * a request that met a memory cgroup's memory.max, mm/memcontrol.c
 * (try_charge_memcg, mem_cgroup_oom).
 *
 * Pure: everything it reads is in its arguments and everything it decides
 * is its return value; it calls nothing back. slowpath.c strings the
 * decisions together (slowpath: the rounds) and oom.c acts on the OOM
 * step's. Must never read gfp_policy or the thread-local state, and never
 * log: slowpath.c and oom.c do both.
 */
#include "decide.h"

unsigned decide_scope_bits(gfp_t flags)
{
	unsigned bits = flags & GFP_SCOPE_MODIFIERS;
	if (flags & GFP_SCOPE_BASE_BITS)
		bits |= GFP_KERNEL & ~context_normalize(flags) & GFP_SCOPE_CLEARS;
	return bits;
}

gfp_t decide_scope_apply(gfp_t f, unsigned scope)
{
	gfp_t clears = scope & GFP_SCOPE_CLEARS;
	f |= scope & GFP_SCOPE_MODIFIERS;
	/* A NOFAIL request keeps its right to wait inside a scope that takes
	 * direct reclaim away: without it, it could only fail. That is why the
	 * kernel reverted PF_MEMALLOC_NORECLAIM (6.12) rather than let NOFAIL
	 * callees of such a scope get NULL; the scope's IO and FS still go. */
	if (f & GFP_NOFAIL)
		clears &= ~GFP_DIRECT_RECLAIM_BIT;
	return context_normalize(f & ~clears);
}

bool decide_scope_nofail_waits(gfp_t ctx, unsigned scope)
{
	return (ctx & GFP_NOFAIL) && (ctx & GFP_DIRECT_RECLAIM_BIT) &&
	       (scope & GFP_DIRECT_RECLAIM_BIT);
}

/* How deep into the reserve flags f reach: the watermark they are held to. */
static int reach(gfp_t f)
{
	if ((f & GFP_MEMALLOC) && !(f & GFP_NOMEMALLOC))
		return 2;
	return (f & GFP_HIGH) != 0;
}

gfp_t decide_attempt_flags(gfp_t ctx, bool in_reclaim, bool victim)
{
	if (ctx & GFP_NOMEMALLOC)
		return ctx;
	if (in_reclaim)
		return ctx | GFP_MEMALLOC; /* ALLOC_NO_WATERMARKS */
	if (victim && !(ctx & GFP_MEMALLOC))
		return ctx | GFP_HIGH; /* ALLOC_OOM: half of min, as HIGH */
	return ctx;
}

/* nopage: a NOFAIL request tries once more with ALLOC_MIN_RESERVE and
 * retries, every other one fails. (One without direct reclaim never gets
 * here: decide_slow_entry failed it.) */
static enum gfp_retry nopage(const struct gfp_retry_in *in, struct gfp_retry_out *out,
                             const char *why)
{
	if (in->flags & GFP_NOFAIL) {
		out->attempt =
		    decide_attempt_flags(in->flags, in->in_reclaim, in->victim) | GFP_HIGH;
		return GFP_RETRY_LOOP;
	}
	out->why = why;
	return GFP_RETRY_FAIL;
}

/* try_charge_memcg's nomem: a memcg has no reserve of its own, so NOFAIL
 * and HIGH (ATOMIC too) are charged past the limit (force:); every other
 * request fails. */
static enum gfp_retry memcg_nomem(const struct gfp_retry_in *in, struct gfp_retry_out *out,
                                  const char *why)
{
	if (in->flags & (GFP_NOFAIL | GFP_HIGH))
		return GFP_RETRY_FORCE;
	out->why = why;
	return GFP_RETRY_FAIL;
}

/* try_charge_memcg after a round of reclaim (the first attempt's entry is
 * decide_slow_entry's). */
static enum gfp_retry memcg_decide(const struct gfp_retry_in *in, struct gfp_retry_out *out)
{
	gfp_t f = in->flags;
	bool costly = in->size > in->costly;
	if (f & GFP_NORETRY)
		return memcg_nomem(in, out,
		                   "NORETRY: one round of reclaim left the cgroup at memory.max");
	/* A small charge whose reclaim freed something retries without
	 * counting; every other round spends one of MAX_RECLAIM_RETRIES,
	 * which only a memcg OOM gives back. There is no costly shortcut:
	 * a large charge gets its retries too. */
	if (!in->progress || costly)
		out->no_progress++;
	if (out->no_progress <= in->retries && in->could_reach)
		return GFP_RETRY_LOOP;
	if (f & GFP_RETRY_MAYFAIL)
		return memcg_nomem(in, out,
		                   "RETRY_MAYFAIL: memory.max, no progress in the allowed rounds");
	/* mem_cgroup_oom: no OOM kill above PAGE_ALLOC_COSTLY_ORDER. */
	if (costly)
		return memcg_nomem(in, out,
		                   "costly size: memory.max, and no memcg OOM kill above order 3");
	return GFP_RETRY_OOM;
}

enum gfp_retry decide_slow_entry(const struct gfp_retry_in *in, const char **why)
{
	gfp_t f = in->flags;
	*why = NULL;
	/* try_charge_memcg: PF_MEMALLOC is charged past the limit at once,
	 * "to facilitate memory reclaim"; a charge that may not block goes to
	 * nomem. */
	if (in->memcg && !in->reserve &&
	    (in->in_reclaim || (!(f & GFP_DIRECT_RECLAIM_BIT) && (f & (GFP_NOFAIL | GFP_HIGH)))))
		return GFP_RETRY_FORCE;
	/* NOWAIT/ATOMIC had their one attempt (with their reserve); NOFAIL
	 * cannot make them wait: nopage warns and fails them. */
	if (!(f & GFP_DIRECT_RECLAIM_BIT)) {
		*why = "cannot reclaim (NOWAIT/ATOMIC)";
		return GFP_RETRY_FAIL;
	}
	/* PF_MEMALLOC: its attempt ignored the watermarks; it never recurses
	 * into reclaim, so it goes to nopage, where NOFAIL loops. */
	if (in->in_reclaim && !(f & GFP_NOFAIL)) {
		*why = "allocation from inside reclaim";
		return GFP_RETRY_FAIL;
	}
	return GFP_RETRY_LOOP;
}

enum gfp_retry decide_retry_decide(const struct gfp_retry_in *in, struct gfp_retry_out *out)
{
	gfp_t f = in->flags;
	out->no_progress = in->no_progress;
	out->attempt = 0;
	out->why = NULL;
	if (in->rounds == 0)
		return decide_slow_entry(in, &out->why);
	if (in->memcg && !in->reserve)
		return memcg_decide(in, out);
	if (in->in_reclaim)
		return nopage(in, out, "allocation from inside reclaim");
	/* A reservation is many small blocks, not one of its size. */
	bool costly = !in->reserve && in->size > in->costly;
	if (f & GFP_NORETRY)
		return nopage(in, out, "NORETRY: one round of reclaim did not help");
	if (costly && !(f & GFP_RETRY_MAYFAIL))
		return nopage(in, out,
		              "costly size: the kernel gives up after one round above order 3");
	/* should_reclaim_retry: the count resets only for order <= 3, and is
	 * incremented before it is compared, so MAX_RECLAIM_RETRIES (retries=)
	 * rounds without progress are retried and the next one gives up; it
	 * gives up at once when all that is reclaimable could not reach the
	 * min mark. */
	if (in->progress && !costly)
		out->no_progress = 0;
	else
		out->no_progress++;
	if (out->no_progress <= in->retries && in->could_reach)
		return GFP_RETRY_LOOP;
	/* __alloc_pages_may_oom: no OOM kill above order 3 nor for
	 * RETRY_MAYFAIL; both go to nopage, where NOFAIL loops. */
	if (costly || (f & GFP_RETRY_MAYFAIL)) {
		if (in->could_reach)
			return nopage(in, out, "RETRY_MAYFAIL: no progress in the allowed rounds");
		return nopage(in, out,
		              "RETRY_MAYFAIL: all that is reclaimable would not reach "
		              "the watermark");
	}
	if (!(f & GFP_FS_BIT) && in->nofs_fail && !(f & GFP_NOFAIL)) {
		/* Linux 3.19 failed !__GFP_FS here, before out_of_memory();
		 * cc87317726f8 restored the loop. */
		out->why = in->could_reach
		               ? "NOFS/NOIO without progress (nofs_fail=1, Linux 3.19)"
		               : "NOFS/NOIO: all that is reclaimable would not reach the "
		                 "watermark (nofs_fail=1, Linux 3.19)";
		return GFP_RETRY_FAIL;
	}
	return GFP_RETRY_OOM;
}

enum gfp_retry decide_retry_after_oom(const struct gfp_retry_in *in, enum oom_result o,
                                   struct gfp_retry_out *out)
{
	gfp_t f = in->flags;
	bool nofail = f & GFP_NOFAIL;
	/* oom_lock was busy: somebody else is making progress for us. */
	bool progress = o == OOM_PROGRESS || o == OOM_BUSY;
	out->attempt = 0;
	out->why = NULL;
	if (in->memcg && !in->reserve) {
		/* mem_cgroup_oom: nobody to kill, or the shim's oom=fail, is
		 * nomem; a dying process does not loop (passed_oom &&
		 * task_is_dying); a kill (or another thread's step) gives the
		 * retries back. */
		if (o == OOM_NO_VICTIM || o == OOM_GIVE_UP)
			return memcg_nomem(in, out,
			                   o == OOM_GIVE_UP
			                       ? "the OOM step gave up (oom=fail)"
			                       : "memory.max: the memcg OOM step found "
			                         "nobody to kill");
		if (in->victim)
			return memcg_nomem(in, out,
			                   "OOM victim: memory.max, and the process is dying");
		if (progress)
			out->no_progress = 0;
		return GFP_RETRY_LOOP;
	}
	if (nofail && o != OOM_BUSY) {
		/* Whatever out_of_memory() did, WARN_ON_ONCE_GFP(NOFAIL) counts
		 * it as progress, and NOFAIL tries with no watermarks at all
		 * (__alloc_pages_cpuset_fallback with ALLOC_NO_WATERMARKS). */
		progress = true;
		out->attempt = (f & ~GFP_NOMEMALLOC) | GFP_MEMALLOC;
	}
	/* An OOM victim whose reserves (ALLOC_OOM) ran out goes to nopage
	 * rather than loop ("too small to fail" has this one exception). */
	if (in->victim && !(f & GFP_MEMALLOC)) {
		if (nofail)
			return GFP_RETRY_LOOP; /* nopage's try is weaker than the one above */
		out->why = "OOM victim: its share of the reserve is spent";
		return GFP_RETRY_FAIL;
	}
	if (o == OOM_GIVE_UP && !nofail) {
		out->why = "the OOM step gave up (oom=fail)";
		return GFP_RETRY_FAIL;
	}
	if (progress)
		out->no_progress = 0;
	return GFP_RETRY_LOOP;
}

int decide_oom_first(const struct gfp_oom_in *in)
{
	/* out_of_memory() calls the oom_notify_list chain first, whatever
	 * else holds: a notifier that freed anything is progress. */
	if (in->freed)
		return GFP_OOM_FREED;
	/* task_will_free_mem(current): the dying process gets the reserves,
	 * nobody else is killed. */
	if (in->victim)
		return GFP_OOM_DYING;
	/* The OOM killer does not help !__GFP_FS: progress, no kill (NOFS
	 * and NOIO loop, since cc87317726f8). Not so for a memcg OOM, which
	 * kills for NOFS too ("mem_cgroup_oom() has to invoke the OOM killer
	 * even if it is a GFP_NOFS allocation"). */
	if (!(in->flags & GFP_FS_BIT) && !in->memcg)
		return GFP_OOM_NOFS;
	return -1;
}

bool decide_oom_needs_adj(enum gfp_oom_action oom)
{
	return oom == OOM_KILL || oom == OOM_ABORT;
}

enum gfp_oom_do decide_oom_action(const struct gfp_oom_in *in)
{
	switch (in->oom) {
	case OOM_FAIL:
		return GFP_OOM_FAIL;
	case OOM_WAIT:
	case OOM_NOTIFY:
		return GFP_OOM_WAIT;
	case OOM_KILL:
		if (in->tree)
			return GFP_OOM_TREE; /* select_bad_process among the members */
		break;
	case OOM_ABORT:
		break;
	}
	/* OOM_SCORE_ADJ_MIN: never the victim, and there is no other. */
	if (in->adj <= -1000)
		return GFP_OOM_UNKILLABLE;
	return in->oom == OOM_ABORT ? GFP_OOM_ABORT : GFP_OOM_KILL;
}

bool decide_extra_attempt(gfp_t extra, gfp_t round)
{
	/* An extra try weaker than the round's own is not worth one. */
	return extra && reach(extra) > reach(round);
}
