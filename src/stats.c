/*
 * stats.c - totals per entry point and the GFP_REPORT file written at exit
 * (the hit table of stats=paths it prints is stats_paths.c's).
 *
 * Counting happens in each thread's own block (thread.c); this file only
 * sums and prints. The report is built in a static buffer and handed to
 * dest_report.c: exit handlers may run while stdio is in any state.
 */
#include <unistd.h>

#include "gfp_build.h"
#include "log.h"
#include "dest.h"
#include "meaning.h"
#include "dest_report.h"
#include "dest_set.h"
#include "profile_api.h"
#include "rules.h"
#include "budget.h"
#include "reserve.h"
#include "inject.h"
#include "stats.h"
#include "stats_paths.h"
#include "vmstat.h"
#include "mapped.h"
#include "path.h"

static struct gfp_dest report = {.var = "GFP_REPORT", .fd = -1};

/* GFP_REPORT: checked now (dest_set.c), written at exit (dest_report.c). */
int stats_set_report(const char *value, bool secure, char *err, size_t errlen)
{
	if (!value || !*value)
		return 0;
	if (gfp_dest_set(&report, "GFP_REPORT", GFP_DEST_REPORT, value, secure, err, errlen) != 0)
		return -1;
	if (gfp_dest_on(&report) && !gfp_policy.set[GFP_K_stats])
		gfp_policy.stats = GFP_STATS_TOTALS;
	return 0;
}

static void format_report(struct gfp_buf *b, const struct gfp_entry_stats *s)
{
	uint64_t calls = 0, bytes = 0, failures = 0;
	for (size_t i = 0; i < GFP_ENTRY_COUNT; i++) {
		calls += s[i].calls;
		bytes += s[i].bytes;
		failures += s[i].failures;
	}
	gfp_buf_printf(b, "{\"gfpshim\":\"%s\",\"pid\":%d", GFP_VERSION, (int)getpid());
	/* Early in the text: the run's first process reads it back (dest_report.c). */
	gfp_dest_report_run_json(&report, b);
	gfp_buf_printf(b, ",\"policy\":{");
	for (size_t i = 0; i < GFP_KEY_COUNT; i++) {
		char v[256];
		struct gfp_buf vb = {v, sizeof(v), 0};
		config_format_value(&gfp_keys[i], &gfp_policy, &vb);
		v[vb.len] = '\0';
		gfp_buf_printf(b, "%s\"%s\":", i ? "," : "", gfp_keys[i].name);
		gfp_buf_json_str(b, v);
	}
	gfp_buf_printf(b, "},\"rules\":");
	gfp_buf_json_str(b, rules_text());
	gfp_buf_printf(b, ",\"totals\":{\"calls\":%llu,\"bytes\":%llu,\"failures\":%llu},",
	               (unsigned long long)calls, (unsigned long long)bytes,
	               (unsigned long long)failures);
	gfp_buf_printf(b, "\"entries\":{");
	const char *sep = "";
	for (size_t i = 0; i < GFP_ENTRY_COUNT; i++) {
		if (!s[i].calls)
			continue;
		gfp_buf_printf(b, "%s", sep);
		gfp_buf_json_str(b, gfp_entry_name[i]);
		gfp_buf_printf(b, ":{\"calls\":%llu,\"bytes\":%llu,\"failures\":%llu}",
		               (unsigned long long)s[i].calls, (unsigned long long)s[i].bytes,
		               (unsigned long long)s[i].failures);
		sep = ",";
	}
	gfp_buf_printf(b, "},\"unwinds\":%llu", (unsigned long long)path_unwinds());
	mapped_report(b);
	if (gfp_policy.stats == GFP_STATS_PATHS)
		stats_paths_report(b, inject_eligible_calls(), inject_other_thread_calls());
	if (gfp_policy.stats >= GFP_STATS_SITES)
		profile_report(b);
	if (gfp_policy.reserve_thread || gfp_budget_on || gfp_policy.reserve_prefault)
		reserve_report(b);
	vmstat_report(b);
	gfp_buf_printf(b, "}\n");
}

/* The report as of now, into `b` (gfp-ctl report, and at exit). */
void stats_format(struct gfp_buf *b, struct gfp_entry_stats s[GFP_ENTRY_COUNT])
{
	thread_sum_stats(s);
	format_report(b, s);
}

void stats_report_at_exit(void)
{
	if (!gfp_policy.stats)
		return;
	static struct gfp_entry_stats s[GFP_ENTRY_COUNT];
	if (!gfp_dest_on(&report)) {
		/* No file: one summary line in the log, unless that is the
		 * program's stderr and nothing failed: a program whose stderr
		 * is read (a test runner reads its workers') must find there
		 * what it finds without the shim. */
		uint64_t calls = 0, failures = 0;
		thread_sum_stats(s);
		for (size_t i = 0; i < GFP_ENTRY_COUNT; i++)
			calls += s[i].calls, failures += s[i].failures;
		if (failures || gfp_log_private())
			gfp_log(GFP_LOG_INFO, "pid %d: %llu calls, %llu failures", (int)getpid(),
			        (unsigned long long)calls, (unsigned long long)failures);
		return;
	}
	static char text[GFP_REPORT_MAX];
	struct gfp_buf b = {text, sizeof(text), 0};
	stats_format(&b, s);
	/* One report per process: %p in the path becomes the pid; without it
	 * the run's first process writes the path and the others PATH.PID. */
	gfp_dest_report_publish(&report, text, b.len);
}
