/*
 * console.c - the result on the terminal: the line that says what the sweep
 * runs, then the outcomes, a line per finding, each finding with its
 * backtraces, evidence and reproducers, and the abort sites.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

/* The line that says what the sweep is about to run. */
void console_header(void)
{
	progress_clear();
	fprintf(stdout,
	        "gfp-sweep: %s: %llu eligible call%s at %zu call site%s; %zu run%s (%s mode",
	        opt.argv[0], (unsigned long long)sweep.eligible, sweep.eligible == 1 ? "" : "s",
	        sweep.nsites, sweep.nsites == 1 ? "" : "s", sweep.nruns,
	        sweep.nruns == 1 ? "" : "s", opt.mode);
	if (opt.shard_n > 1)
		fprintf(stdout, ", shard %d/%d", opt.shard_k, opt.shard_n);
	if (opt.shard_from[0])
		fprintf(stdout, " from %s", opt.shard_from);
	fprintf(stdout, ", -j %d)\n", opt.jobs);
	fflush(stdout);
}

/* ------------------------------------------------------------------------
 * The result: a line per finding, then each one's evidence
 * ---------------------------------------------------------------------- */

#define SHOWN_PATHS 10 /* call paths listed per finding; the reports list all */

/* "1 run", "3 runs" */
static void plural(FILE *f, size_t n, const char *word)
{
	fprintf(f, "%zu %s%s", n, word, n == 1 ? "" : "s");
}

/* One line per finding, and what each class of them means. */
static void print_summary(const struct finding *fs, size_t nfs)
{
	size_t runs_n = 0;
	bool shown[O_COUNT] = {false};
	for (size_t f = 0; f < nfs; f++)
		runs_n += fs[f].count;
	printf("findings: %zu, from ", nfs);
	plural(stdout, runs_n, "run");
	printf("\n");
	for (size_t f = 0; f < nfs; f++) {
		const struct run *r = &sweep.runs[fs[f].first];
		printf("  [%zu] ", f + 1);
		findings_title(stdout, r);
		printf(" (");
		words_counts(stdout, &fs[f]);
		printf(")\n");
	}
	for (size_t f = 0; f < nfs; f++) {
		enum outcome o = sweep.runs[fs[f].first].outcome;
		if (!shown[o])
			printf("  %s: %s\n", outcome_name[o], outcome_help[o]);
		shown[o] = true;
	}
}

/* A silent finding's receivers: the program frames the failure came back
 * to, which carried on, each with its runs. */
static void print_receivers(size_t f, const struct path *p, size_t np)
{
	char(*who)[300] = xrealloc(NULL, (np + 1) * sizeof(*who));
	size_t *count = xrealloc(NULL, (np + 1) * sizeof(*count)), n = 0;
	for (size_t k = 0; k < np; k++) {
		struct membuf m;
		words_path(membuf_open(&m), &sweep.runs[p[k].first]);
		fclose(m.f);
		size_t i = 0;
		while (i < n && strcmp(who[i], m.buf) != 0)
			i++;
		if (i == n) {
			snprintf(who[n], sizeof(who[0]), "%s", m.buf);
			count[n++] = 0;
		}
		count[i] += p[k].count;
		free(m.buf);
	}
	printf("  the failure came back to, and the program carried on in:\n");
	for (size_t i = 0; i < n && i < SHOWN_PATHS; i++) {
		printf("    %s: ", who[i]);
		plural(stdout, count[i], "run");
		printf("\n");
	}
	if (n > SHOWN_PATHS)
		printf("    ... and %zu more (--json and --html list every call path)\n",
		       n - SHOWN_PATHS);
	(void)f;
	free(who);
	free(count);
}

/* A finding's call paths past its first, each with its reproducer. */
static void print_paths(size_t f, const struct path *p, size_t np)
{
	printf("  %zu call paths lead here; each one's first run:\n", np);
	for (size_t k = 0; k < np && k < SHOWN_PATHS; k++) {
		const struct run *r = &sweep.runs[p[k].first];
		printf("    [%zu.%zu] ", f + 1, k + 1);
		words_path(stdout, r);
		printf(", site %s, %s %llu: ", r->inj_site[0] ? r->inj_site : "-",
		       plan_point_kind(r), (unsigned long long)r->hit);
		plural(stdout, p[k].count, "run");
		printf("\n          reproduce: ");
		reproducer_print(stdout, r);
		printf("\n");
	}
	if (np > SHOWN_PATHS)
		printf("    ... and %zu more (--json and --html list every call path)\n",
		       np - SHOWN_PATHS);
}

static void print_finding(const struct finding *fs, size_t f)
{
	const struct run *r = &sweep.runs[fs[f].first];
	printf("\n[%zu] ", f + 1);
	findings_title(stdout, r);
	printf("\n  ");
	words_outcome(stdout, r);
	printf(" in ");
	words_counts(stdout, &fs[f]);
	printf("; the first: allocation failure at site %s, %s %llu\n",
	       r->inj_site[0] ? r->inj_site : "-", plan_point_kind(r), (unsigned long long)r->hit);
	printf("  the failed allocation:\n");
	frames_print(r->inj_frames, false);
	if (r->crash_frames[0]) {
		printf("  %s:\n", r->outcome == O_HANG ? "where it waited when the timeout came"
		                  : r->fault           ? "the crash (the fault the handler caught)"
		                                       : "the crash");
		frames_print(r->crash_frames, true);
	}
	if (r->ev.offset >= 0)
		words_evidence(stdout, &r->ev, "  ");
	if (r->loss.message[0])
		printf("  its message on stderr: %s\n", r->loss.message);
	printf("  reproduce (%s): ", !fs[f].rerun      ? "not re-run: interrupted"
	                             : fs[f].confirmed ? "confirmed"
	                                               : "NOT reproduced");
	reproducer_print(stdout, r);
	printf("\n");
	struct path *p;
	size_t np = findings_paths(f, &p);
	if (r->outcome == O_SILENT)
		print_receivers(f, p, np);
	if (np > 1)
		print_paths(f, p, np);
	free(p);
}

/* The distinct abort sites (aborts.c), each with its reproducer. */
static void print_abort_sites(void)
{
	struct abort_site *sites;
	size_t n = aborts_find(&sites), runs_n = 0;
	for (size_t k = 0; k < n; k++)
		runs_n += sites[k].count;
	if (n)
		printf(
		    "\nabort sites: %zu (%zu run%s): the program aborted on purpose? check each\n",
		    n, runs_n, runs_n == 1 ? "" : "s");
	for (size_t k = 0; k < n; k++) {
		const struct abort_site *s = &sites[k];
		printf("  [A%zu] %zu run%s: ", k + 1, s->count, s->count == 1 ? "" : "s");
		if (s->has_aborter)
			frames_words(stdout, &s->aborter);
		else
			printf("%s", sweep.runs[s->first].crash_top[0]
			                 ? sweep.runs[s->first].crash_top
			                 : "-");
		printf(" aborted for the allocation of ");
		if (s->has_alloc)
			frames_words(stdout, &s->alloc);
		else
			printf("-");
		printf("\n    reproduce: ");
		reproducer_print(stdout, &sweep.runs[s->first]);
		printf("\n");
	}
	free(sites);
}

/* The outcomes, a line per finding, then each finding with its backtraces
 * and reproducers. */
void console_results(const struct finding *fs, size_t nfs, const size_t *counts)
{
	if (sweep.interrupted)
		printf("interrupted after %zu of %zu runs (SIG%s): the runs in flight were killed, "
		       "the rest not started\n",
		       sweep.runs_done, sweep.runs_planned, sigabbrev_np(stop_requested()));
	printf("outcomes:");
	for (int o = 0; o < O_COUNT; o++)
		if (counts[o])
			printf(" %s %zu", outcome_name[o], counts[o]);
	printf("%s\n", sweep.nruns ? "" : " none");
	if (!nfs)
		printf("no crash, hang or silent data loss behind any failure point\n");
	else
		print_summary(fs, nfs);
	for (size_t f = 0; f < nfs; f++)
		print_finding(fs, f);
	print_abort_sites();
	frame_names_hint(stdout);
}
