/*
 * junit.c - --junit: one JUnit testcase per finding, for CI: a failure per
 * bug, named by its state, with its call paths; one more testcase passes
 * for the failure points without a finding, so that a clean sweep is a
 * passing test rather than none.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"
#include "gfp_build.h"
#include "sweep.h"

/* "crash (signal 11) in 2 call paths, 5 runs": the JUnit failure message. */
static void failure_message(FILE *f, const struct finding *fd)
{
	const struct run *r = &sweep.runs[fd->first];
	if (r->outcome == O_HANG)
		fprintf(f, "hang (killed after %.0f s)", run_timeout());
	else if (r->outcome == O_SILENT && r->ev.offset >= 0)
		fprintf(f, "silent%s (exit %d, output differs at offset %lld)",
		        r->loss.message[0] ? ", with a message" : "", r->status, r->ev.offset);
	else if (r->outcome == O_SILENT)
		fprintf(f, "silent%s (exit %d where the recording run exited %d)",
		        r->loss.message[0] ? ", with a message" : "", r->status, sweep.rec_status);
	else if (r->fault)
		fprintf(f, "%s (signal %d, caught by the program's handler)",
		        outcome_name[r->outcome], r->fault);
	else if (r->signal)
		fprintf(f, "%s (signal %d)", outcome_name[r->outcome], r->signal);
	else
		fprintf(f, "%s (exit status %d)", outcome_name[r->outcome], r->status);
	if (r->startup)
		fprintf(f, " at start-up, before main");
	fprintf(f, " in ");
	words_counts(f, fd);
}

/* The last bytes of a run's standard error (the program's messages and
 * the shim's log), from a line start so that no character is cut. */
static void stderr_tail(FILE *f, const struct run *r)
{
	char path[PATH_MAX + 16];
	size_t len;
	run_paths(r->idx, "err", path, sizeof(path));
	char *err = infile_read(path, &len);
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
		markup_program_text(f, from);
		fprintf(f, "</system-err>\n");
	}
	free(err);
}

static void junit_property(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	markup_esc(f, value, true);
	fprintf(f, "\"/>\n");
}

/* The sweep's settings as the testsuite's properties. */
static void junit_properties(FILE *f)
{
	char buf[64];
	struct membuf m;
	fprintf(f, "    <properties>\n");
	reproducer_command(membuf_open(&m));
	fclose(m.f);
	junit_property(f, "program", m.buf);
	free(m.buf);
	junit_property(f, "mode", opt.mode);
	snprintf(buf, sizeof(buf), "%d/%d", opt.shard_k, opt.shard_n);
	junit_property(f, "shard", buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)sweep.eligible);
	junit_property(f, "eligible_calls", buf);
	snprintf(buf, sizeof(buf), "%zu", sweep.nsites);
	junit_property(f, "sites", buf);
	junit_property(f, "gfp_sweep", GFP_VERSION);
	junit_property(f, "startup", opt.startup ? "true" : "false");
	/* A stopped sweep's testcases are the runs that finished. */
	junit_property(f, "interrupted", sweep.interrupted ? "true" : "false");
	snprintf(buf, sizeof(buf), "%zu", sweep.runs_planned - sweep.runs_done);
	junit_property(f, "runs_not_done", buf);
	fprintf(f, "    </properties>\n");
}

/* ------------------------------------------------------------------------
 * A testcase per finding
 * ---------------------------------------------------------------------- */

#define JUNIT_PATHS 50 /* call paths listed in a failure's text */

/* The program's name as its user typed it, without the directory. */
static const char *program_name(void)
{
	const char *slash = strrchr(opt.argv[0], '/');
	return slash ? slash + 1 : opt.argv[0];
}

/* Where CI shows a finding: the place a title names (frame_title_place:
 * the program's own source line) of its state's first frame that has one,
 * the program's first; else of its first call path's caller. */
static const struct sym_place *finding_place(const struct run *r)
{
	struct state st;
	const struct sym_place *p;
	if (state_of(r, &st))
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < st.n; i++)
				if ((pass || st.prog[i]) && st.frame[i].info &&
				    (p = frame_title_place(st.frame[i].info)) && p->file &&
				    p->line > 0)
					return p;
	struct caller c;
	if (caller_of(r, &c) && c.fr.info && (p = frame_title_place(c.fr.info)) && p->file &&
	    p->line > 0)
		return p;
	return NULL;
}

/* What a failure's text says: the class and what it means, the first
 * run's backtraces, evidence and reproducer, then every call path. */
static void failure_text(FILE *t, const struct finding *fs, size_t f)
{
	const struct run *r = &sweep.runs[fs[f].first];
	fprintf(t, "%s: %s\n", outcome_name[r->outcome], outcome_help[r->outcome]);
	findings_title(t, r);
	fprintf(t, "\nthe first of its runs: ");
	words_outcome(t, r);
	fprintf(t, ": allocation failure at site %s, %s %llu\nthe failed allocation:\n",
	        r->inj_site[0] ? r->inj_site : "-", plan_point_kind(r), (unsigned long long)r->hit);
	frames_each(r->inj_frames, false, frames_print_line, t);
	if (r->crash_frames[0]) {
		fprintf(t, "%s:\n",
		        r->outcome == O_HANG ? "where it waited when the timeout came"
		                             : "the crash");
		frames_each(r->crash_frames, true, frames_print_line, t);
	}
	if (r->ev.offset >= 0)
		words_evidence(t, &r->ev, "");
	if (r->loss.message[0])
		fprintf(t, "its message on stderr: %s\n", r->loss.message);
	fprintf(t, "reproduce (%s): ",
	        !fs[f].rerun      ? "not re-run: interrupted"
	        : fs[f].confirmed ? "confirmed"
	                          : "NOT reproduced");
	reproducer_print(t, r);
	struct path *p;
	size_t np = findings_paths(f, &p);
	fprintf(t, "\n%zu call path%s:\n", np, np == 1 ? "" : "s");
	for (size_t k = 0; k < np && k < JUNIT_PATHS; k++) {
		const struct run *q = &sweep.runs[p[k].first];
		words_path(t, q);
		fprintf(t,
		        ", site %s: %zu run%s\n  reproduce: ", q->inj_site[0] ? q->inj_site : "-",
		        p[k].count, p[k].count == 1 ? "" : "s");
		reproducer_print(t, q);
		fputc('\n', t);
	}
	if (np > JUNIT_PATHS)
		fprintf(t, "... and %zu more (the --json report lists them all)\n",
		        np - JUNIT_PATHS);
	free(p);
}

static void finding_case(FILE *f, const struct finding *fs, size_t fi, const char *id)
{
	const struct run *r = &sweep.runs[fs[fi].first];
	struct membuf m;
	double seconds = 0;
	for (size_t i = 0; i < sweep.nruns; i++)
		if (sweep.runs[i].finding == (long)fi)
			seconds += sweep.runs[i].seconds;
	fprintf(f, "    <testcase classname=\"");
	markup_esc(f, id ? id : program_name(), true);
	fprintf(f, "\" name=\"");
	findings_title(membuf_open(&m), r);
	markup_flush(&m, f, true);
	fprintf(f, "\"");
	const struct sym_place *place = finding_place(r);
	if (place) {
		fprintf(f, " file=\"");
		markup_esc(f, place->file, true);
		fprintf(f, "\" line=\"%d\"", place->line);
	}
	fprintf(f, " time=\"%.3f\">\n      <failure message=\"", seconds);
	failure_message(membuf_open(&m), &fs[fi]);
	markup_flush(&m, f, true);
	fprintf(f, "\" type=\"%s\">", outcome_name[r->outcome]);
	failure_text(membuf_open(&m), fs, fi);
	markup_flush(&m, f, false);
	fprintf(f, "</failure>\n");
	stderr_tail(f, r);
	fprintf(f, "    </testcase>\n");
}

/* The failure points without a finding: one passing testcase. */
static void rest_case(FILE *f, const size_t *counts, const char *id)
{
	double seconds = 0;
	for (size_t i = 0; i < sweep.nruns; i++)
		if (!is_finding(sweep.runs[i].outcome))
			seconds += sweep.runs[i].seconds;
	fprintf(f, "    <testcase classname=\"");
	markup_esc(f, id ? id : program_name(), true);
	fprintf(f,
	        "\" name=\"failure points without a finding\" time=\"%.3f\">\n"
	        "      <system-out>",
	        seconds);
	struct membuf m;
	FILE *t = membuf_open(&m);
	for (int o = 0; o < O_COUNT; o++)
		if (!is_finding((enum outcome)o))
			fprintf(t, "%s %zu: %s\n", outcome_name[o], counts[o], outcome_help[o]);
	markup_flush(&m, f, false);
	fprintf(f, "</system-out>\n    </testcase>\n");
}

/* A testcase per finding, one for the rest. A campaign's target (id) names
 * its testsuite and is its testcases' class. */
void junit_testsuite(FILE *f, const struct report_head *h, const struct finding *fs, size_t nfs,
                     const size_t *counts, const char *id)
{
	const char *stamp = h->stamp, *host = h->host[0] ? h->host : "localhost";
	double total = sweep_now() - sweep.started;
	fprintf(f, "  <testsuite name=\"gfp-sweep ");
	markup_esc(f, id ? id : opt.argv[0], true);
	fprintf(f,
	        "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"%.3f\" "
	        "timestamp=\"%s\" hostname=\"",
	        nfs + 1, nfs, total, stamp);
	markup_esc(f, host, true);
	fprintf(f, "\">\n");
	junit_properties(f);
	for (size_t fi = 0; fi < nfs; fi++)
		finding_case(f, fs, fi, id);
	rest_case(f, counts, id);
	fprintf(f, "  </testsuite>\n");
}

void junit_write(const char *path, const struct finding *fs, size_t nfs, const size_t *counts)
{
	struct report_head h;
	report_open(&h, path, counts, "%Y-%m-%dT%H:%M:%S");
	FILE *f = h.f;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f,
	        "<testsuites name=\"gfp-sweep\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	        "time=\"%.3f\">\n",
	        nfs + 1, nfs, sweep_now() - sweep.started);
	junit_testsuite(f, &h, fs, nfs, counts, NULL);
	fprintf(f, "</testsuites>\n");
	report_done(&h.out);
}
