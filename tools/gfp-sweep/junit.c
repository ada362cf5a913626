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
	else if (r->outcome == O_SILENT && r->ev.offset >= 0)
		fprintf(f, "silent (exit %d, output differs at offset %lld)", r->status,
		        r->ev.offset);
	else if (r->outcome == O_SILENT)
		fprintf(f, "silent (exit %d where the recording run exited %d)", r->status,
		        opt.rec_status);
	else if (r->fault)
		fprintf(f, "%s (signal %d, caught by the program's handler)",
		        outcome_name[r->outcome], r->fault);
	else if (r->signal)
		fprintf(f, "%s (signal %d)", outcome_name[r->outcome], r->signal);
	else
		fprintf(f, "%s (exit status %d)", outcome_name[r->outcome], r->status);
}

/* The last bytes of a run's standard error (the program's messages and
 * the shim's log), from a line start so that no character is cut. */
static void stderr_tail(FILE *f, const struct run *r)
{
	char path[PATH_MAX + 16];
	size_t len;
	run_paths(r->idx, "err", path, sizeof(path));
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
	junit_property(f, "startup", opt.startup ? "true" : "false");
	/* A stopped sweep's testcases are the runs that finished. */
	junit_property(f, "interrupted", opt.interrupted ? "true" : "false");
	snprintf(buf, sizeof(buf), "%zu", opt.runs_planned - opt.runs_done);
	junit_property(f, "runs_not_done", buf);
	fprintf(f, "    </properties>\n");
}

/* ------------------------------------------------------------------------
 * Testcase names: the failed allocation's caller
 * ---------------------------------------------------------------------- */

/* A testcase's names: the failed allocation's caller "make_title
 * inventory.c:98 (hit 1)", else its frame "sym (module+offset) (hit 1)",
 * else the failure point "site ID (hit 1)" or "call N"; file and line where
 * CI shows the test (file: the source file, else the module; "" unknown). */
struct case_name {
	char *name, *file;
	long line;
	bool shared; /* another site's run has the same name */
};

static char *copy(const char *s)
{
	char *c = strdup(s);
	if (!c)
		die(EXIT_USAGE, "out of memory");
	return c;
}

static void name_one(struct case_name *n, const struct run *r, bool with_site)
{
	struct caller c;
	char where[600], name[700];
	free(n->name), free(n->file);
	n->line = 0;
	if (!run_caller(r, &c)) {
		if (r->site[0])
			snprintf(name, sizeof(name), "site %s (hit %llu)", r->site,
			         (unsigned long long)r->hit);
		else
			snprintf(name, sizeof(name), "call %llu", (unsigned long long)r->hit);
		n->name = copy(name), n->file = copy("");
		return;
	}
	if (c.line) { /* the file's path is the attribute's */
		const char *base = strrchr(c.file, '/');
		snprintf(where, sizeof(where), "%s %s:%ld", c.func, base ? base + 1 : c.file,
		         c.line);
		n->line = c.line;
	} else {
		bool sym = c.fr.sym[0];
		snprintf(where, sizeof(where), "%s%s%s+%s%s", c.fr.sym, sym ? " (" : "", c.fr.mod,
		         c.fr.off, sym ? ")" : "");
	}
	snprintf(name, sizeof(name), "%s (%s %llu%s%s%s)", where, point_kind(r),
	         (unsigned long long)r->hit, r->startup ? ", start-up" : "",
	         with_site ? ", site " : "", with_site ? r->inj_site : "");
	n->name = copy(name), n->file = copy(c.line ? c.file : c.fr.mod);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct case_name *)a)->name, ((const struct case_name *)b)->name);
}

/* Every run's names. Two sites can fail under the same caller (a program's
 * own xmalloc): CI merges testcases of one name, so those name their site. */
static struct case_name *case_names(void)
{
	struct case_name *names = calloc(nruns + 1, sizeof(*names)),
	                 *sorted = calloc(nruns + 1, sizeof(*sorted));
	if (!names || !sorted)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < nruns; i++)
		name_one(&names[i], &runs[i], false);
	memcpy(sorted, names, nruns * sizeof(*names));
	qsort(sorted, nruns, sizeof(*sorted), name_cmp);
	for (size_t i = 0; i < nruns; i++) {
		struct case_name *dup =
		    bsearch(&names[i], sorted, nruns, sizeof(*sorted), name_cmp);
		names[i].shared = (dup > sorted && name_cmp(dup - 1, dup) == 0) ||
		                  (dup + 1 < sorted + nruns && name_cmp(dup + 1, dup) == 0);
	}
	free(sorted); /* its names are names[]'s: renamed only now */
	for (size_t i = 0; i < nruns; i++)
		if (names[i].shared && runs[i].inj_site[0])
			name_one(&names[i], &runs[i], true);
	return names;
}

static void free_names(struct case_name *names)
{
	for (size_t i = 0; i < nruns; i++)
		free(names[i].name), free(names[i].file);
	free(names);
}

/* The program's name as its user typed it, without the directory. */
static const char *program_name(void)
{
	const char *slash = strrchr(opt.argv[0], '/');
	return slash ? slash + 1 : opt.argv[0];
}

/* One testcase per failure point: CI shows each finding as a failed test
 * with both backtraces and its reproducer, unreached points as skipped. A
 * campaign's target (id) names its testsuite and is its testcases' class. */
void junit_testsuite(FILE *f, const struct report_head *h, const struct group *groups,
                     const size_t *counts, const char *id)
{
	size_t failures = 0;
	for (int o = 0; o < O_COUNT; o++)
		failures += is_finding((enum outcome)o) ? counts[o] : 0;
	const char *stamp = h->stamp, *host = h->host[0] ? h->host : "localhost";
	double total = now() - opt.started;
	fprintf(f, "  <testsuite name=\"gfp-sweep ");
	esc(f, id ? id : opt.argv[0], true);
	fprintf(f,
	        "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\" "
	        "timestamp=\"%s\" hostname=\"",
	        nruns, failures, counts[O_UNREACHED], total, stamp);
	esc(f, host, true);
	fprintf(f, "\">\n");
	junit_properties(f);
	struct membuf m;
	struct case_name *names = case_names();

	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		fprintf(f, "    <testcase classname=\"");
		esc(f, id ? id : program_name(), true);
		fprintf(f, "\" name=\"");
		esc(f, names[i].name, true);
		fprintf(f, "\"");
		if (names[i].file[0]) {
			fprintf(f, " file=\"");
			esc(f, names[i].file, true);
			fprintf(f, "\"");
		}
		if (names[i].line)
			fprintf(f, " line=\"%ld\"", names[i].line);
		fprintf(f, " time=\"%.3f\"", r->seconds);
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
		outcome_words(t, r);
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
		if (r->ev.offset >= 0)
			print_evidence(t, &r->ev, "");
		fprintf(t, "reproduce: ");
		reproducer(t, r);
		fprintf(t, "\n");
		mem_flush(&m, f, false);
		fprintf(f, "</failure>\n");
		stderr_tail(f, r);
		fprintf(f, "    </testcase>\n");
	}
	fprintf(f, "  </testsuite>\n");
	free_names(names);
}

void write_junit(const char *path, const struct group *groups, const size_t *counts)
{
	struct report_head h;
	report_open(&h, path, counts, "%Y-%m-%dT%H:%M:%S");
	FILE *f = h.f;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f,
	        "<testsuites name=\"gfp-sweep\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	        "time=\"%.3f\">\n",
	        nruns, h.findings, now() - opt.started);
	junit_testsuite(f, &h, groups, counts, NULL);
	fprintf(f, "</testsuites>\n");
	report_done(&h.out);
}
