/*
 * apply.c - the wiring of a policy, at start-up (init.c) and after each
 * gfp-ctl set (ctl.c): the facts of the process gathered, what meaning.c
 * makes of the policy published, and every module set up to it, in that
 * order. meaning.c only derives; this file starts the modules, and must
 * never be called from one of them.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "apply.h"
#include "cgroup.h"
#include "kswapd.h"
#include "mapped.h"

/* The budget's followers (budget.h): where the budget looks, limit=cgroup's
 * figures and kswapd look too. */
static void budget_look(bool near)
{
	if (unlikely(gfp_cgroup_on)) {
		if (near)
			cgroup_near();
		else
			cgroup_tick();
	}
	if (unlikely(gfp_kswapd_on))
		kswapd_check();
}

/* The facts of this process now (meaning.h: struct gfp_facts). */
static struct gfp_facts meaning_facts(void)
{
	return (struct gfp_facts){
	    .rules = gfp_rules_on,
	    .records = records_on(),
	    .other_process = inject_other_process(),
	    .je_own = gfp_je_own,
	};
}

void apply_policy(void)
{
	struct gfp_facts f = meaning_facts();
	struct gfp_meaning m = meaning_of(&gfp_policy, &f);
	/* What the ranges of ld.so and the shim are, before injection can
	 * look at them (a set may turn a process that was idle active). */
	static bool unwinder_ready;
	if (m.unwinds && !unwinder_ready) {
		unwind_init();
		site_init();
		unwinder_ready = true;
	}
	/* A look only where something follows: limit=cgroup's figures, or
	 * kswapd (which gfp-ctl may turn on or off). */
	budget_follow((struct budget_followers){
	    .look = gfp_cgroup_on || gfp_policy.kswapd ? budget_look : NULL,
	    .marks = kswapd_marks});
	budget_init(gfp_policy.limit == GFP_SIZE_WORD ? cgroup_budget_now()
	                                              : (int64_t)gfp_policy.limit);
	mapped_follow_policy(); /* whether mappings count: after the budget */
	/* Published but for `active`, which threads read with an acquire and
	 * which comes last (release): a thread that sees the process active
	 * sees the rest. */
	_Static_assert(offsetof(struct gfp_meaning, active) == 0, "active comes first");
	size_t rest = offsetof(struct gfp_meaning, unwinds);
	memcpy((char *)&gfp_meaning + rest, (const char *)&m + rest, sizeof(m) - rest);
	inject_init(); /* every count starts again, as for a new process */
	profile_init();
	__atomic_store_n(&gfp_meaning.active, m.active, __ATOMIC_RELEASE);
}
