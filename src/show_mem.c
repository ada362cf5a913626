/*
 * show_mem.c - the kernel's show_mem for the budget: Mem-Info lines of the
 * budget, the cgroup's, and the top call sites, for the OOM report
 * (oom_report.c) and the allocation-failure report (canary.c).
 *
 * Must never call into the reports that print it (canary.c, oom*.c), nor
 * allocate: it runs inside malloc.
 */
#include "log.h"
#include "meaning.h"
#include "budget.h"
#include "cgroup.h"
#include "profile_api.h"
#include "tree.h"
#include "show_mem.h"

void show_mem(struct gfp_buf *b, const char *prefix)
{
	if (gfp_budget_on) {
		char h[9][GFP_HUMAN_LEN];
		int64_t live = budget_live(), limit = budget_limit();
		gfp_buf_printf(b,
		               "\n%sMem-Info: live:%s limit:%s free:%s reserved:%s waiting:%d "
		               "threads:%u",
		               prefix, gfp_human_size(h[0], live), gfp_human_size(h[1], limit),
		               gfp_human_size(h[2], limit > live ? limit - live : 0),
		               gfp_human_size(h[3], budget_reserved()),
		               __atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED),
		               __atomic_load_n(&gfp_nr_threads, __ATOMIC_RELAXED));
		if (gfp_tree_on)
			gfp_buf_printf(b, " (live, limit, free and reserved: the tree's)");
		/* Each class of request may fill the budget up to its watermark:
		 * what the kernel prints as min/low/high per zone. */
		gfp_buf_printf(
		    b,
		    "\n%sMem-Info: watermarks kernel:%s high:%s atomic:%s memalloc:%s min_free:%s",
		    prefix, gfp_human_size(h[4], budget_watermark(GFP_KERNEL)),
		    gfp_human_size(h[5], budget_watermark(GFP_KERNEL | GFP_HIGH)),
		    gfp_human_size(h[6], budget_watermark(GFP_ATOMIC)),
		    gfp_human_size(h[7], budget_watermark(GFP_KERNEL | GFP_MEMALLOC)),
		    gfp_human_size(h[8], budget_min_free()));
	}
	cgroup_show_mem(b, prefix);
	if (gfp_meaning.profile)
		profile_report_top(b, prefix, 10);
}
