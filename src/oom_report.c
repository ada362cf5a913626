/*
 * oom_report.c - the OOM step's report (oom_kill_process's dump_header) and
 * its record: what oom.c and tree_oom.c say about a request that met the
 * OOM killer.
 *
 * Must never call into oom.c or tree_oom.c (they call it), nor allocate:
 * it runs inside malloc (stack buffers, one write).
 */
#include <pthread.h>
#include <unistd.h>

#include "log.h"
#include "meaning.h"
#include "comm.h"
#include "budget.h"
#include "cgroup.h"
#include "canary.h"
#include "unwind.h"
#include "records.h"
#include "tree.h"
#include "show_mem.h"
#include "oom_report.h"

void oom_record(const struct gfp_slow *s, const char *outcome, const struct gfp_frame *frames,
                int n)
{
	if (!records_on())
		return;
	char extra[256];
	gfp_snprintf(extra, sizeof(extra), "\"rounds\":%u,\"outcome\":\"%s\"", s->rounds, outcome);
	record_event("oom", s->req, frames, n, extra);
}

/* The kernel-style OOM report (oom_kill_process's), and its record: the
 * request, the backtrace, Mem-Info, the tree's members (dump_tasks), and
 * what happens now. `last` for the report of a kill, which always prints;
 * the others are rate-limited (a NOFAIL request that keeps looping would
 * print one per round). */
void oom_report(const struct gfp_slow *s, int adj, const char *outcome, bool last)
{
	static const char prefix[] = "gfpshim: error: ";
	unsigned missed = 0;
	bool print = last || canary_oom_report_ok(&missed);
	if (!print && !records_on())
		return;
	struct gfp_frame frames[24];
	int n = unwind_capture(frames, 24);
	oom_record(s, outcome, frames, n);
	if (!print)
		return;
	char msg[8192], names[128], thread[32] = "", size[GFP_HUMAN_LEN], rounds[32];
	struct gfp_buf b = {msg, sizeof(msg) - 1, 0};
	if (missed)
		gfp_buf_printf(&b, "%soom-killer: %u reports suppressed\n", prefix, missed);
	gfp_flags_name(s->req->gfp, names, sizeof(names));
	pthread_getname_np(pthread_self(), thread, sizeof(thread));
	gfp_buf_printf(&b,
	               "%s%s(%d) invoked oom-killer: size=%zu order=%u mode:%s %#x "
	               "oom_score_adj=%d\n",
	               prefix, gfp_comm(), (int)getpid(), s->req->size, canary_order(s->req->size),
	               names, s->req->gfp, adj);
	gfp_buf_printf(&b, "%sthread %s (tid %d) looped %s without progress on %s: ", prefix,
	               thread, (int)gettid(), canary_rounds(s->rounds, rounds, sizeof(rounds)),
	               gfp_human_size(size, (int64_t)s->req->size));
	if (cgroup_charge_failed(s->req))
		gfp_buf_printf(&b, gfp_tree_on ? "the tree is at its cgroup's memory.max"
		                               : "the process is at its cgroup's memory.max");
	else if (gfp_budget_on)
		gfp_buf_printf(&b, gfp_tree_on ? "the tree's budget is at its watermark"
		                               : "the budget is at its watermark");
	else if (s->req->why == GFP_WHY_INJECT)
		gfp_buf_printf(&b, "every attempt failed by injection (fail.where=attempt)");
	else
		gfp_buf_printf(&b, "no budget: jemalloc itself returned NULL (ulimit -v?)");
	unwind_format(&b, frames, n);
	show_mem(&b, prefix);
	if (gfp_tree_on)
		tree_oom_dump_tasks(&b, prefix);
	gfp_buf_printf(&b, "\n%s%s\n", prefix, outcome);
	gfp_log_raw(msg, b.len);
}
