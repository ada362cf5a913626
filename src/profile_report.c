/*
 * profile_report.c - stats=sites' report: every caller's counts summed over
 * threads (profile.c), its peak, and where it lies, as the report's
 * "allocinfo" rows and the OOM and allocation-failure reports' top call
 * sites. Paid per report, never per call.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "thread.h"
#include "modules.h"
#include "site.h"
#include "unwind.h"
#include "profile_api.h"

static int by_live_bytes(const void *a, const void *b)
{
	const struct gfp_caller_counts *x = a, *y = b;
	return x->live_bytes < y->live_bytes ? 1 : x->live_bytes > y->live_bytes ? -1 : 0;
}

struct row {
	struct gfp_caller_counts c; /* first: by_live_bytes compares it */
	unsigned idx;
};

/* A report's working set (one report at a time: report_lock), and each
 * caller's peak: the most live bytes it was seen to hold, exact for its
 * large blocks (apart_peak), and for all its blocks as of each full count:
 * every report, every OOM and allocation-failure report. */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static struct row rows[PROFILE_MAX_CALLERS];
static struct gfp_caller_counts sum[PROFILE_MAX_CALLERS];
static int64_t peak[PROFILE_MAX_CALLERS]; /* under report_lock */

/* Every caller's counts as of now in rows[], by live bytes, peaks raised:
 * how many rows. Under report_lock. */
static unsigned count_all(void)
{
	unsigned n = profile_thread_sum(sum), nr = 0;
	for (unsigned i = 1; i <= n; i++) {
		int64_t apart = profile_apart_peak(i);
		if (sum[i].live_bytes > peak[i])
			peak[i] = sum[i].live_bytes;
		if (apart > peak[i])
			peak[i] = apart;
		if (sum[i].calls)
			rows[nr++] = (struct row){sum[i], i};
	}
	qsort(rows, nr, sizeof(rows[0]), by_live_bytes);
	return nr;
}

/* Where a row's caller lies: module, offset, and its exported symbol when
 * the module is still the one it was taken from (a dlclosed library's
 * place may hold another now). */
struct where {
	unsigned mod; /* modules.c's index, 0: none */
	const char *name;
	uintptr_t off;
	struct gfp_frame fr; /* fr.func: "" when it has no name */
};

static struct where where_of(unsigned idx)
{
	unsigned mod;
	uintptr_t off, ip = profile_caller_where(idx, &mod, &off), now_off = ip;
	struct where w = {mod, "?", off, {0}};
	const struct gfp_module *m = modules_get(w.mod);
	const char *now = site_module(ip, &now_off);
	if (m)
		w.name = m->name;
	else if (now) /* too many modules to keep: where it is now */
		w.name = now, w.off = now_off;
	/* Named as backtraces are (inside a symbol's size), but not when the
	 * caller's module is gone: another may lie there now. */
	if (now && strcmp(now, w.name) == 0 && now_off == w.off)
		unwind_name(&w.fr, ip);
	return w;
}

void profile_report(struct gfp_buf *b)
{
	static unsigned mods[PROFILE_MAX_CALLERS];
	gfp_lock(&report_lock);
	unsigned nr = count_all(), nmods = 0;
	gfp_buf_printf(b, ",\"allocinfo\":[");
	for (unsigned r = 0; r < nr; r++) {
		const struct gfp_caller_counts *c = &rows[r].c;
		struct where w = where_of(rows[r].idx);
		unsigned k = 0;
		while (k < nmods && mods[k] != w.mod)
			k++;
		if (w.mod && k == nmods)
			mods[nmods++] = w.mod;
		gfp_buf_printf(b, "%s{\"module\":", r ? "," : "");
		gfp_buf_json_str(b, w.name);
		gfp_buf_printf(b, ",\"offset\":\"%#lx\"", (unsigned long)w.off);
		if (w.fr.func[0]) {
			char s[160];
			gfp_snprintf(s, sizeof(s), "%s+%#lx", w.fr.func,
			             (unsigned long)w.fr.func_off);
			gfp_buf_printf(b, ",\"symbol\":");
			gfp_buf_json_str(b, s);
		}
		if (profile_mapped_by(rows[r].idx))
			gfp_buf_printf(b, ",\"mapped\":true");
		gfp_buf_printf(
		    b,
		    ",\"live_bytes\":%lld,\"peak_bytes\":%lld,\"live_calls\":%lld,\"calls\":%llu,"
		    "\"bytes\":%llu,\"failures\":%llu,\"injections\":%llu,\"retries\":%llu,"
		    "\"max_stall_us\":%llu}",
		    (long long)c->live_bytes, (long long)peak[rows[r].idx],
		    (long long)c->live_calls, (unsigned long long)c->calls,
		    (unsigned long long)c->bytes, (unsigned long long)c->failures,
		    (unsigned long long)c->injections, (unsigned long long)c->retries,
		    (unsigned long long)(c->max_stall_ns / 1000));
	}
	gfp_buf_printf(b, "],\"modules\":[");
	for (unsigned k = 0; k < nmods; k++) {
		if (k)
			gfp_buf_printf(b, ",");
		modules_json(b, mods[k]);
	}
	gfp_buf_printf(b, "]");
	gfp_unlock(&report_lock);
}

void profile_report_top(struct gfp_buf *b, const char *prefix, unsigned max)
{
	/* An OOM report from a thread that holds the lock (a report that
	 * allocates cannot: the shim's formatting does not) goes without. */
	if (pthread_mutex_trylock(&report_lock) != 0)
		return;
	unsigned nr = count_all();
	gfp_buf_printf(b, "\n%sMemory allocations (top %u call sites by live bytes):", prefix,
	               nr < max ? nr : max);
	for (unsigned r = 0; r < nr && r < max; r++) {
		const struct gfp_caller_counts *c = &rows[r].c;
		struct where w = where_of(rows[r].idx);
		char live[GFP_HUMAN_LEN], pk[GFP_HUMAN_LEN];
		gfp_buf_printf(b, "\n%s  %10s %9lld calls  peak %10s  ", prefix,
		               gfp_human_size(live, c->live_bytes), (long long)c->live_calls,
		               gfp_human_size(pk, peak[rows[r].idx]));
		/* names come from files: control bytes quoted */
		if (w.fr.func[0]) {
			gfp_buf_quote(b, w.fr.func, strlen(w.fr.func));
			gfp_buf_printf(b, "+%#lx ", (unsigned long)w.fr.func_off);
		}
		gfp_buf_printf(b, "(");
		gfp_buf_quote(b, w.name, strlen(w.name));
		gfp_buf_printf(b, "+%#lx)", (unsigned long)w.off);
	}
	pthread_mutex_unlock(&report_lock);
}

void profile_report_atfork_child(void)
{
	profile_atfork_child();
	pthread_mutex_init(&report_lock, NULL);
}
