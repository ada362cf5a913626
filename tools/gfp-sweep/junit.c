/*
 * junit.c - --junit: one JUnit testcase per failure point, for CI.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "gfp_build.h"
#include "sweep.h"

/* "crash (signal 11)": the JUnit failure message. */
static void failure_message(FILE *f, const struct run *r)
{
	if (r->outcome == O_HANG)
		fprintf(f, "hang (killed after %.0f s)", run_timeout());
	else if (r->outcome == O_SILENT)
		fprintf(f, "silent (exit 0, output differs from the recording run)");
	else if (r->signal)
		fprintf(f, "%s (signal %d)", outcome_name[r->outcome], r->signal);
	else
		fprintf(f, "%s (exit status %d)", outcome_name[r->outcome], r->status);
}

/* The last bytes of a run's standard error (the program's messages and
 * the shim's log), from a line start so that no character is cut. */
static void stderr_tail(FILE *f, size_t run_idx)
{
	char path[PATH_MAX + 16];
	size_t len;
	run_paths((int)run_idx + 1, "err", path, sizeof(path));
	char *err = text_slurp(path, &len);
	if (!err)
		return;
	const char *from = err;
	if (len > 4096) {
		from = err + len - 4096;
		const char *nl = strchr(from, '\n');
		if (nl)
			from = nl + 1;
	}
	if (*from) {
		fprintf(f, "      <system-err>");
		esc(f, from, false);
		fprintf(f, "</system-err>\n");
	}
	free(err);
}

static void junit_property(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	esc(f, value, true);
	fprintf(f, "\"/>\n");
}

/* The sweep's settings as the testsuite's properties. */
static void junit_properties(FILE *f)
{
	char buf[64];
	struct membuf m;
	fprintf(f, "    <properties>\n");
	command_line(mem_open(&m));
	fclose(m.f);
	junit_property(f, "program", m.buf);
	free(m.buf);
	junit_property(f, "mode", opt.mode);
	snprintf(buf, sizeof(buf), "%d/%d", opt.shard_k, opt.shard_n);
	junit_property(f, "shard", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)eligible);
	junit_property(f, "eligible_calls", buf);
	snprintf(buf, sizeof(buf), "%zu", nsites);
	junit_property(f, "sites", buf);
	junit_property(f, "gfp_sweep", GFP_VERSION);
	fprintf(f, "    </properties>\n");
}

/* One testcase per failure point: CI shows each finding as a failed test
 * with both backtraces and its reproducer, unreached points as skipped. */
void write_junit(const char *path, const struct group *groups, const size_t *counts)
{
	struct report_head h;
	report_open(&h, path, counts, "%Y-%m-%dT%H:%M:%S");
	FILE *f = h.f;
	size_t failures = h.findings;
	const char *stamp = h.stamp, *host = h.host[0] ? h.host : "localhost";
	double total = now() - opt.started;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f,
	        "<testsuites name=\"gfp-sweep\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	        "time=\"%.3f\">\n",
	        nruns, failures, total);
	fprintf(f, "  <testsuite name=\"gfp-sweep ");
	esc(f, opt.argv[0], true);
	fprintf(f,
	        "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\" "
	        "timestamp=\"%s\" hostname=\"",
	        nruns, failures, counts[O_UNREACHED], total, stamp);
	esc(f, host, true);
	fprintf(f, "\">\n");
	junit_properties(f);
	struct membuf m;

	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		const char *site = r->site[0] ? r->site : r->inj_site[0] ? r->inj_site : "none";
		fprintf(f, "    <testcase classname=\"site.%s\" name=\"%s %llu\" time=\"%.3f\"",
		        site, point_kind(r), (unsigned long long)r->hit, r->seconds);
		if (r->outcome == O_UNREACHED) {
			fprintf(f, ">\n      <skipped message=\"the program made fewer eligible "
			           "calls than this failure point needs\"/>\n    </testcase>\n");
			continue;
		}
		if (!is_finding(r->outcome)) {
			fprintf(f, "/>\n");
			continue;
		}
		fprintf(f, ">\n      <failure message=\"");
		failure_message(mem_open(&m), r);
		mem_flush(&m, f, true);
		fprintf(f, "\" type=\"%s\">", outcome_name[r->outcome]);
		FILE *t = mem_open(&m);
		long g = runs[i].group;
		fprintf(t, "%s", outcome_name[r->outcome]);
		if (r->signal)
			fprintf(t, " (signal %d %s)", r->signal, strsignal(r->signal));
		fprintf(t, ": allocation failure at site %s, %s %llu",
		        r->inj_site[0] ? r->inj_site : "-", point_kind(r),
		        (unsigned long long)r->hit);
		if (g >= 0)
			fprintf(t, "; finding group [%ld] of %zu run%s", g + 1, groups[g].count,
			        groups[g].count == 1 ? "" : "s");
		fprintf(t, "\nthe failed allocation:\n");
		each_frame(r->inj_frames, false, print_frame, t);
		if (r->crash_frames[0]) {
			fprintf(t, "the crash:\n");
			each_frame(r->crash_frames, true, print_frame, t);
		}
		fprintf(t, "reproduce: ");
		reproducer(t, r);
		fprintf(t, "\n");
		mem_flush(&m, f, false);
		fprintf(f, "</failure>\n");
		stderr_tail(f, i);
		fprintf(f, "    </testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	if (fclose(f) != 0)
		die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
}
