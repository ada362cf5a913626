/*
 * oom.c - the OOM step (__alloc_pages_may_oom): what happens to a request
 * that loops without progress.
 *
 * Under a budget of its own the process is the only candidate victim, so
 * "kill" means this process: log a kernel-style report, then SIGKILL (or
 * abort() for a core). Under a tree's budget (limit.scope=tree) oom=kill
 * chooses among the members (tree_oom.c). As in the kernel, a task with
 * oom_score_adj -1000 is never chosen: its requests keep looping. As
 * out_of_memory() does, the notifiers run first under every oom=, and what
 * they free is progress; a process already dying kills nobody else, and a
 * request without GFP_FS makes progress without a kill (decide.c:
 * decide_oom_first). One thread of the process runs the step at a time.
 *
 * A request that met a memory cgroup's memory.max (limit=cgroup) runs a
 * memcg OOM instead (mem_cgroup_oom, out_of_memory with is_memcg_oom):
 * memory.events' oom counts it; no notifiers (they are the global OOM's);
 * NOFS and NOIO kill as well; the victim is chosen inside the cgroup
 * only: the process itself, or under limit.scope=tree among the tree's
 * members; with nobody to kill the charge fails rather than loops; and
 * memory.oom.group takes the whole group (the tree) along.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "meaning.h"
#include "comm.h"
#include "budget.h"
#include "reclaim.h"
#include "oom.h"
#include "cgroup.h"
#include "canary.h"
#include "unwind.h"
#include "records.h"
#include "tree.h"
#include "tree_proc.h"
#include "oom_report.h"
#include "vmstat.h"

/* The pid of the process one of whose threads runs the OOM step (oom_lock),
 * 0 when none: a forked child finds its parent's, which is not its own, and
 * takes it over. Never waited for: a thread that finds it taken counts that
 * as progress and waits for memory, as the kernel's trylock does, so a
 * notifier that loops (a NOFAIL request of its own) holds up nobody else's
 * rounds, only their OOM steps. */
static int oom_owner;

static bool oom_trylock(void)
{
	int me = getpid(), cur = 0;
	if (__atomic_compare_exchange_n(&oom_owner, &cur, me, false, __ATOMIC_ACQUIRE,
	                                __ATOMIC_RELAXED))
		return true;
	return cur != me && __atomic_compare_exchange_n(&oom_owner, &cur, me, false,
	                                                __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void oom_unlock(void)
{
	__atomic_store_n(&oom_owner, 0, __ATOMIC_RELEASE);
}

/* The pid of this process once it chose itself as the victim (a kill or
 * an abort under way): its other threads get the victim's reserves and no
 * second report. A forked child is not the victim. */
static int victim_pid;

bool oom_is_victim(void)
{
	int v = __atomic_load_n(&victim_pid, __ATOMIC_RELAXED);
	return v && v == getpid();
}

static enum oom_result oom_act(struct gfp_slow *s)
{
	unsigned action = gfp_policy.oom;
	bool memcg = cgroup_charge_failed(s->req);
	struct gfp_oom_in in = {
	    .flags = s->req->gfp,
	    .victim = oom_is_victim(),
	    .oom = (enum gfp_oom_action)action,
	    .tree = gfp_tree_on,
	    .memcg = memcg,
	};
	/* Notifiers first, under every oom= (out_of_memory's order); what
	 * they free is progress. A memcg OOM calls none: what they would
	 * free is not the cgroup's to count. */
	in.freed = memcg ? 0 : reclaim_oom_notify();
	if (decide_oom_first(&in) >= 0)
		return OOM_PROGRESS;
	if (decide_oom_needs_adj(in.oom))
		in.adj = tree_proc_adj(0);
	int adj = in.adj;
	char outcome[128];
	switch (decide_oom_action(&in)) {
	case GFP_OOM_WAIT:
		return OOM_RETRY;
	case GFP_OOM_FAIL: {
		/* No killer runs: the request fails, and the slow path's
		 * allocation-failure report (warn_alloc) tells it once. A NOFAIL
		 * request cannot be failed: say so once, keep looping. */
		bool nofail = s->req->gfp & GFP_NOFAIL;
		if (memcg && (s->req->gfp & (GFP_NOFAIL | GFP_HIGH))) {
			/* try_charge_memcg's nomem: charged past memory.max. */
			if (records_on()) {
				struct gfp_frame frames[24];
				oom_record(s, "oom=fail: charged past the cgroup's memory.max",
				           frames, unwind_capture(frames, 24));
			}
			return OOM_GIVE_UP;
		}
		if (records_on() && (!nofail || !s->oom_exempt_logged)) {
			struct gfp_frame frames[24];
			oom_record(s,
			           nofail ? "oom=fail, a NOFAIL request keeps looping"
			                  : "oom=fail: the request fails",
			           frames, unwind_capture(frames, 24));
		}
		if (nofail && !s->oom_exempt_logged)
			canary_warn_alloc(s, "out of memory and oom=fail, but a NOFAIL request "
			                     "cannot fail: it keeps looping");
		s->oom_exempt_logged = true;
		return OOM_GIVE_UP;
	}
	case GFP_OOM_TREE: /* a victim among the tree's members */
		return tree_oom_kill(s, adj, memcg, memcg && cgroup_oom_group());
	case GFP_OOM_UNKILLABLE:
		if (memcg) {
			/* out_of_memory finds nobody: "Out of memory and no
			 * killable processes...", and the charge fails. */
			if (!s->oom_exempt_logged)
				oom_report(s, adj,
				           "Out of memory and no killable processes: oom_score_adj "
				           "is -1000, the charge fails",
				           false);
			s->oom_exempt_logged = true;
			return OOM_NO_VICTIM;
		}
		/* Never the victim, and there is no other: keep looping. Say so
		 * once per request, not every round. */
		if (!s->oom_exempt_logged) {
			oom_report(s, adj,
			           "Out of memory and no killable process: oom_score_adj is -1000, "
			           "the request keeps looping",
			           false);
			s->oom_exempt_logged = true;
		}
		return OOM_RETRY;
	case GFP_OOM_ABORT:
		__atomic_store_n(&victim_pid, getpid(), __ATOMIC_RELAXED);
		oom_report(s, adj, "Out of memory: aborting (oom=abort)", true);
		abort();
	default:
		break;
	}
	__atomic_store_n(&victim_pid, getpid(), __ATOMIC_RELAXED);
	char live[GFP_HUMAN_LEN + 8] = "", h[GFP_HUMAN_LEN];
	if (gfp_budget_on)
		gfp_snprintf(live, sizeof(live), " live:%s", gfp_human_size(h, budget_live()));
	/* The process is the only task of its group the shim knows of:
	 * memory.oom.group takes nobody else along. */
	bool group = memcg && cgroup_oom_group();
	gfp_snprintf(outcome, sizeof(outcome), "%s: Killed process %d (%s)%s%s",
	             memcg ? "Memory cgroup out of memory" : "Out of memory", (int)getpid(),
	             gfp_comm(), live, group ? " (memory.oom.group)" : "");
	oom_report(s, adj, outcome, true);
	if (group)
		vmstat_memcg_event(GFP_MEMCG_OOM_GROUP_KILL);
	vmstat_memcg_event(GFP_MEMCG_OOM_KILL);
	kill(getpid(), SIGKILL);
	for (;;)
		pause();
}

enum oom_result oom_step(struct gfp_slow *s)
{
	/* mem_cgroup_oom counts MEMCG_OOM before it takes oom_lock; the
	 * budget of limit=SIZE counts its own OOM steps so. */
	vmstat_memcg_event(GFP_MEMCG_OOM);
	if (!oom_trylock())
		return OOM_BUSY;
	enum oom_result r = oom_act(s);
	oom_unlock();
	return r;
}
