/*
 * stats.c - totals per entry point, the hit table of stats=paths (eligible
 * calls per call path), and the GFP_REPORT file written at exit.
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
#include "init.h"
#include "profile_api.h"
#include "rules.h"
#include "budget.h"
#include "reserve.h"
#include "inject.h"
#include "stats.h"
#include "kswapd.h"
#include "mapped.h"
#include "path.h"

const char *const gfp_entry_name[GFP_ENTRY_COUNT] = {
#define ENTRY(id, name, kind) name,
#include "entries.def"
#undef ENTRY
};

static struct gfp_dest report = {.var = "GFP_REPORT", .fd = -1};

/* The hit table (stats=paths): eligible calls per call path (the path id
 * fail.site takes, site.depth frames deep), for gfp-sweep's recording run,
 * and the first of them by the process's eligible-call number (what fail.nth
 * counts), so that a sweep of every Nth call can still reach every path. */
#define HIT_TABLE 16384
struct hit_count {
	uint64_t id;    /* atomic; 0 = empty */
	uint64_t hits;  /* atomic */
	uint64_t first; /* atomic: the lowest call number seen, 0 = none yet */
	uint64_t early; /* atomic: hits before main (fail.startup=1) */
	/* The first, second and last hit by the first thread's own call
	 * numbers (what fail.site.call takes), valid while every hit is that
	 * thread's: the numbers other threads interleave with it change from
	 * run to run, its own do not. */
	uint64_t tfirst, tsecond, tlast;
	bool others; /* atomic: another thread hit it */
};
static struct hit_count hit_table[HIT_TABLE];
static uint64_t hit_overflow;  /* atomic: calls whose path found no slot (JSON: sites_overflow) */
static uint64_t startup_calls; /* atomic: eligible calls before main (fail.startup=1) */

/* Threads number their calls before they count them: the first to count a
 * path need not hold its lowest number, so keep the minimum. */
static void hit_first(struct hit_count *e, uint64_t call)
{
	uint64_t cur = __atomic_load_n(&e->first, __ATOMIC_RELAXED);
	while ((cur == 0 || call < cur) &&
	       !__atomic_compare_exchange_n(&e->first, &cur, call, false, __ATOMIC_RELAXED,
	                                    __ATOMIC_RELAXED))
		;
}

/* An eligible call (inject.c numbers them) on path `id`: call is its
 * number in the process, tcall the calling thread's own; early, before
 * main; mine, made by the process's initial thread. */
void stats_path_hit(uint64_t id, uint64_t call, uint64_t tcall, bool early, bool mine)
{
	if (early)
		__atomic_add_fetch(&startup_calls, 1, __ATOMIC_RELAXED);
	id |= id == 0;
	for (unsigned i = 0; i < 64; i++) {
		struct hit_count *e = &hit_table[(id + i) % HIT_TABLE];
		uint64_t cur = __atomic_load_n(&e->id, __ATOMIC_ACQUIRE);
		if (cur == 0 && __atomic_compare_exchange_n(&e->id, &cur, id, false,
		                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			cur = id;
		if (cur == id) {
			uint64_t hits = __atomic_add_fetch(&e->hits, 1, __ATOMIC_RELAXED);
			if (early)
				__atomic_add_fetch(&e->early, 1, __ATOMIC_RELAXED);
			hit_first(e, call);
			if (!mine) {
				__atomic_store_n(&e->others, true, __ATOMIC_RELAXED);
				return;
			}
			/* One thread writes these (the others only mark), in its
			 * order: hits is then its own count. */
			if (hits == 1)
				__atomic_store_n(&e->tfirst, tcall, __ATOMIC_RELAXED);
			else if (hits == 2)
				__atomic_store_n(&e->tsecond, tcall, __ATOMIC_RELAXED);
			__atomic_store_n(&e->tlast, tcall, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_add_fetch(&hit_overflow, 1, __ATOMIC_RELAXED);
}

static void report_paths(struct gfp_buf *b)
{
	gfp_buf_printf(b,
	               ",\"eligible_calls\":%llu,\"startup_calls\":%llu,\"sites_overflow\":%llu,"
	               "\"other_thread_calls\":%llu,\"sites\":[",
	               (unsigned long long)inject_eligible_calls(),
	               (unsigned long long)__atomic_load_n(&startup_calls, __ATOMIC_RELAXED),
	               (unsigned long long)__atomic_load_n(&hit_overflow, __ATOMIC_RELAXED),
	               (unsigned long long)inject_other_thread_calls());
	const char *sep = "";
	for (unsigned i = 0; i < HIT_TABLE; i++) {
		uint64_t id = __atomic_load_n(&hit_table[i].id, __ATOMIC_ACQUIRE);
		if (!id)
			continue;
		const struct hit_count *e = &hit_table[i];
		gfp_buf_printf(b, "%s{\"site\":\"%016llx\",\"hits\":%llu,\"first\":%llu", sep,
		               (unsigned long long)id,
		               (unsigned long long)__atomic_load_n(&e->hits, __ATOMIC_RELAXED),
		               (unsigned long long)__atomic_load_n(&e->first, __ATOMIC_RELAXED));
		if (!__atomic_load_n(&e->others, __ATOMIC_RELAXED)) /* the first thread's alone */
			gfp_buf_printf(
			    b, ",\"first_thread_calls\":[%llu,%llu,%llu]",
			    (unsigned long long)__atomic_load_n(&e->tfirst, __ATOMIC_RELAXED),
			    (unsigned long long)__atomic_load_n(&e->tsecond, __ATOMIC_RELAXED),
			    (unsigned long long)__atomic_load_n(&e->tlast, __ATOMIC_RELAXED));
		uint64_t early = __atomic_load_n(&hit_table[i].early, __ATOMIC_RELAXED);
		if (early) /* the hits a run sees only with fail.startup=1 */
			gfp_buf_printf(b, ",\"startup\":%llu", (unsigned long long)early);
		gfp_buf_printf(b, "}");
		sep = ",";
	}
	gfp_buf_printf(b, "]");
}

/* At start-up and after a gfp-ctl set, as the eligible calls (inject.c):
 * the table keeps the paths seen. */
void stats_paths_restart(void)
{
	__atomic_store_n(&startup_calls, 0, __ATOMIC_RELAXED);
}

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
		report_paths(b);
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
