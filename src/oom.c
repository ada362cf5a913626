/*
 * oom.c - the OOM step (__alloc_pages_may_oom): what happens to a request
 * that loops without progress.
 *
 * The process is the only candidate victim, so "kill" means this process:
 * log a kernel-style report, then SIGKILL (or abort() for a core). As in the
 * kernel, a task with oom_score_adj -1000 is never chosen: its requests keep
 * looping. Notifiers run first when oom=notify; what they free is progress.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "init.h"
#include "budget.h"
#include "reclaim.h"
#include "oom.h"
#include "canary.h"
#include "unwind.h"
#include "records.h"

extern char *program_invocation_short_name;

static int oom_score_adj(void)
{
	char buf[32];
	int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	int sign = 1, v = 0;
	const char *p = buf;
	if (*p == '-')
		sign = -1, p++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	return sign * v;
}

/* The kernel-style OOM report, and its record. `last` for the report before
 * the process dies, which always prints; the others are rate-limited (a
 * program that keeps failing under oom=fail would print one per request). */
static void report(const struct gfp_slow *s, int adj, const char *outcome, bool last)
{
	unsigned missed = 0;
	bool print = last || canary_oom_report_ok(&missed);
	if (!print && !records_on())
		return;
	struct gfp_frame frames[24];
	int n = unwind_capture(frames, 24);
	char msg[8192], names[128], thread[32] = "";
	struct gfp_buf b = {msg, sizeof(msg) - 1, 0};
	if (missed)
		gfp_buf_printf(&b, "gfpshim: error: oom-killer: %u reports suppressed\n", missed);
	gfp_flags_name(s->req->gfp, names, sizeof(names));
	pthread_getname_np(pthread_self(), thread, sizeof(thread));
	gfp_buf_printf(&b,
	               "gfpshim: error: %s(%d) invoked oom-killer: size=%zu order=%u mode:%s %#x "
	               "oom_score_adj=%d\n",
	               program_invocation_short_name, (int)getpid(), s->req->size,
	               gfp_order(s->req->size), names, s->req->gfp, adj);
	gfp_buf_printf(&b, "gfpshim: error: thread %s (tid %d) looped %u rounds without progress; ",
	               thread, (int)gettid(), s->rounds);
	if (gfp_budget_on)
		gfp_buf_printf(&b, "live %lld bytes, limit %lld, watermark %lld",
		               (long long)budget_live(), (long long)budget_limit(),
		               (long long)budget_watermark(s->req->gfp));
	else if (s->req->why == GFP_WHY_INJECT)
		gfp_buf_printf(&b, "every attempt failed by injection (fail.where=attempt)");
	else
		gfp_buf_printf(&b, "no budget: jemalloc itself returned NULL (ulimit -v?)");
	unwind_format(&b, frames, n);
	gfp_buf_printf(&b, "\ngfpshim: error: %s\n", outcome);
	if (records_on()) {
		char extra[256];
		gfp_snprintf(extra, sizeof(extra), "\"rounds\":%u,\"outcome\":\"%s\"", s->rounds,
		             outcome);
		record_event("oom", s->req, frames, n, extra);
	}
	if (print)
		gfp_log_raw(msg, b.len);
}

enum oom_result oom_step(struct gfp_slow *s)
{
	unsigned action = gfp_policy.oom;
	if (action == OOM_WAIT)
		return OOM_RETRY;
	if (action == OOM_NOTIFY) {
		/* Notifiers that free count as progress (kernel-semantics §8). */
		return reclaim_oom_notify() ? OOM_PROGRESS : OOM_RETRY;
	}
	int adj = oom_score_adj();
	char outcome[128];
	if (action == OOM_FAIL) {
		/* A NOFAIL request cannot be failed: report once, keep looping. */
		if (!(s->req->gfp & GFP_NOFAIL))
			report(s, adj, "oom=fail: the request fails", false);
		else if (!s->oom_exempt_logged)
			report(s, adj,
			       "oom=fail, but a NOFAIL request cannot fail: it keeps looping",
			       false);
		s->oom_exempt_logged = true;
		return OOM_GIVE_UP;
	}
	if (adj <= -1000) {
		/* Never the victim, and there is no other: keep looping. Say so
		 * once per request, not every round. */
		if (!s->oom_exempt_logged) {
			report(s, adj,
			       "oom_score_adj is -1000: not killed, the request keeps looping",
			       false);
			s->oom_exempt_logged = true;
		}
		return OOM_RETRY;
	}
	if (action == OOM_ABORT) {
		report(s, adj, "Out of memory: aborting (oom=abort)", true);
		abort();
	}
	gfp_snprintf(outcome, sizeof(outcome), "Out of memory: Killed process %d (%s)",
	             (int)getpid(), program_invocation_short_name);
	report(s, adj, outcome, true);
	kill(getpid(), SIGKILL);
	for (;;)
		pause();
}
