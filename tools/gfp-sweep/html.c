/*
 * html.c - --html: one self-contained page people can work in: the
 * summary, a table of findings and failure points to sort and filter (its
 * state in the URL's fragment), each finding's row opening onto its call
 * paths, a bar per call site, and each finding with its backtraces,
 * evidence, call paths and reproducers to copy. Inline CSS and script,
 * nothing fetched: CI archives it, file:// opens it, and without the script
 * every row is still there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gfp_build.h"
#include "html-assets.h"
#include "html-chart.h"
#include "html-table.h"

/* With more findings than this their backtraces start folded; a finding
 * with more call paths than this has its list folded. */
#define OPEN_FINDINGS 8
#define OPEN_PATHS    8

/* A frame line as the page shows it: the program's source lines bold. */
static void html_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	FILE *f = ctx;
	/* No indent: the <pre> sets the frames apart. */
	if (!fr) {
		size_t sp = strspn(line, " ");
		markup_esc_n(f, line + (sp < len ? sp : len), sp < len ? len - sp : 0, false);
		fputc('\n', f);
		return;
	}
	/* As the console's frame_print: "function file:line (module+offset)",
	 * the symbol for the function without a source line, or
	 * "module+offset" alone; the program's own frames stand out. */
	const char *text = fr->src[0] ? fr->src : fr->sym;
	if (text[0]) {
		fprintf(f, "<span class=\"%s\">",
		        strcmp(fr->mod, frames_prog_base()) == 0 ? "prog" : "lib");
		markup_esc(f, text, false);
		fprintf(f, "</span> ");
	}
	fprintf(f, "<span class=\"loc\">%s", text[0] ? "(" : "");
	markup_esc(f, fr->mod, false);
	fputc('+', f);
	markup_esc(f, fr->off, false);
	fprintf(f, "%s</span>\n", text[0] ? ")" : "");
}

/* loss.c fills ev for a silent run; its line is 1-based, so a zeroed
 * one (runs not classified that way) is no evidence either. */
static bool has_evidence(const struct run *r)
{
	return r->ev.offset >= 0 && r->ev.line > 0;
}

static void html_evidence(FILE *f, const struct evidence *ev)
{
	fprintf(f,
	        "<div class=\"evidence\"><p>The output first differs at byte <b>%lld</b> (line "
	        "%ld, column %ld): the recording run wrote %lld bytes, this run %lld. That line "
	        "in each (-, +):</p>\n"
	        "<pre class=\"diff\"><span class=\"exp\">- ",
	        ev->offset, ev->line, ev->column, ev->expected_bytes, ev->actual_bytes);
	markup_esc(f, ev->expected, false);
	fprintf(f, "</span>\n<span class=\"act\">+ ");
	markup_esc(f, ev->actual, false);
	fprintf(f, "</span></pre></div>\n");
}

/* A reproducer to copy: the bare command in a <pre>, which the Copy button
 * (shown by the script) copies or selects. */
static void html_reproducer(FILE *f, const struct run *r)
{
	fprintf(f, "<div class=\"repro\"><pre>");
	struct membuf m;
	reproducer_print(membuf_open(&m), r);
	markup_flush(&m, f, false);
	fprintf(f, "</pre><button type=\"button\" class=\"copy\" hidden>Copy</button></div>\n");
}

/* Every call path of finding fi: its caller, site, failure points, runs
 * and reproducer. */
static void html_paths(FILE *f, size_t fi)
{
	struct path *p;
	size_t np = findings_paths(fi, &p);
	fprintf(f,
	        "<details class=\"paths\"%s><summary>%zu call path%s</summary>\n"
	        "<table class=\"paths\">\n<tr><th>the failed allocation's caller</th><th>site</th>"
	        "<th>failure points</th><th>runs</th><th>reproduce</th></tr>\n",
	        np <= OPEN_PATHS ? " open" : "", np, np == 1 ? "" : "s");
	for (size_t k = 0; k < np; k++) {
		const struct run *r = &sweep.runs[p[k].first];
		struct membuf m;
		fprintf(f, "<tr><td class=\"fn\">");
		words_path(membuf_open(&m), r);
		markup_flush(&m, f, false);
		fprintf(f, "</td><td><code>%s</code></td><td>", r->inj_site[0] ? r->inj_site : "-");
		html_chart_points(f, findings_in_path, &p[k], 12);
		fprintf(f, "</td><td class=\"num\">%zu</td><td>", p[k].count);
		html_reproducer(f, r);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n</details>\n");
	free(p);
}

static void html_finding(FILE *f, const struct finding *fs, size_t nfs, size_t fi)
{
	const struct run *r = &sweep.runs[fs[fi].first];
	struct membuf m;
	fprintf(f, "<article class=\"finding %s\" id=\"f%zu\">\n<h3><a href=\"#f%zu\">[%zu]</a> ",
	        outcome_name[r->outcome], fi + 1, fi + 1, fi + 1);
	findings_title(membuf_open(&m), r);
	markup_flush(&m, f, false);
	fprintf(f, "</h3>\n<p class=\"meta\">");
	words_outcome(membuf_open(&m), r);
	markup_flush(&m, f, false);
	fprintf(f, " in ");
	words_counts(membuf_open(&m), &fs[fi]);
	markup_flush(&m, f, false);
	fprintf(f,
	        " &middot; the first: allocation failure at site <code>%s</code>, %s %llu "
	        "&middot; its reproducer ",
	        r->inj_site[0] ? r->inj_site : "-", plan_point_kind(r), (unsigned long long)r->hit);
	fputs(!fs[fi].rerun      ? "<span class=\"no\">not re-run: interrupted</span>"
	      : fs[fi].confirmed ? "<span class=\"yes\">confirmed</span>"
	                         : "<span class=\"no\">NOT reproduced</span>",
	      f);
	fprintf(f, "</p>\n");
	if (has_evidence(r))
		html_evidence(f, &r->ev);
	if (r->loss.message[0]) {
		fprintf(f, "<p class=\"message\">Its message on stderr: <code>");
		markup_esc(f, r->loss.message, false);
		fprintf(f, "</code></p>\n");
	}
	fprintf(f, "<details class=\"frames\"%s><summary>backtraces of the first run</summary>\n",
	        nfs <= OPEN_FINDINGS ? " open" : "");
	fprintf(f, "<h4>The failed allocation</h4>\n<pre>");
	frames_each(r->inj_frames, false, html_frame, f);
	fprintf(f, "</pre>\n");
	if (r->crash_frames[0]) {
		fprintf(f, "<h4>%s</h4>\n<pre>",
		        r->outcome == O_HANG ? "Where it waited when the timeout came"
		                             : "The crash");
		frames_each(r->crash_frames, true, html_frame, f);
		fprintf(f, "</pre>\n");
	}
	fprintf(f, "</details>\n<h4>Reproduce</h4>\n");
	html_reproducer(f, r);
	html_paths(f, fi);
	fprintf(f, "</article>\n");
}

/* A sweep stopped by SIGINT or SIGTERM still writes its page: say first
 * that it holds the finished runs only. */
static void html_interrupted(FILE *f, bool interrupted, size_t done, size_t planned)
{
	if (!interrupted)
		return;
	fprintf(f,
	        "<p class=\"banner\" role=\"alert\"><strong>Interrupted:</strong> the sweep was "
	        "stopped after %zu of %zu runs. What follows covers the finished runs only.</p>\n",
	        done, planned);
}

/* The sweep's settings: program, mode, counts, timing, start and host. */
static void html_settings(FILE *f, const struct report_head *h)
{
	fprintf(f, "<table class=\"kv\">\n<tr><th>program</th><td><code>");
	struct membuf m;
	reproducer_command(membuf_open(&m));
	markup_flush(&m, f, false);
	fprintf(f, "</code></td></tr>\n<tr><th>mode</th><td>%s: %s</td></tr>\n", opt.mode,
	        strcmp(opt.mode, "nth") == 0 ? "fail every Nth eligible call"
	                                     : "fail the first, second and last hit of every site");
	fprintf(f,
	        "<tr><th>eligible calls</th><td>%llu</td></tr>\n<tr><th>call sites</th><td>%zu"
	        "</td></tr>\n<tr><th>runs</th><td>%zu",
	        (unsigned long long)sweep.eligible, sweep.nsites, sweep.nruns);
	if (opt.shard_n > 1)
		fprintf(f, " (shard %d/%d)", opt.shard_k, opt.shard_n);
	fprintf(f, ", %d at a time, timeout %.0f s; the sweep took %.1f s</td></tr>\n", opt.jobs,
	        run_timeout(), sweep_now() - sweep.started);
	fprintf(f, "<tr><th>started</th><td>%s", h->stamp);
	if (h->host[0]) {
		fprintf(f, " on ");
		markup_esc(f, h->host, false);
	}
	fprintf(f, "</td></tr>\n</table>\n");
}

/* Every run, folded: exit status and time of each. */
static void html_runs(FILE *f)
{
	fprintf(
	    f,
	    "<details class=\"runs\">\n<summary>All %zu runs</summary>\n<table class=\"runs\">\n"
	    "<tr><th>#</th><th>site</th><th>failure point</th><th>outcome</th><th>exit</th>"
	    "<th>time</th><th>finding</th></tr>\n",
	    sweep.nruns);
	for (size_t i = 0; i < sweep.nruns; i++) {
		const struct run *r = &sweep.runs[i];
		fprintf(f,
		        "<tr><td>%zu</td><td><code>%s</code></td><td>%s %llu</td><td>%s</td>"
		        "<td>",
		        i + 1,
		        r->inj_site[0] ? r->inj_site
		        : r->site[0]   ? r->site
		                       : "-",
		        plan_point_kind(r), (unsigned long long)r->hit, outcome_name[r->outcome]);
		if (r->signal)
			fprintf(f, "signal %d", r->signal);
		else
			fprintf(f, "%d", r->status);
		fprintf(f, "</td><td>%.2f s</td><td>", r->seconds);
		if (r->finding >= 0)
			fprintf(f, "<a href=\"#f%ld\">[%ld]</a>", r->finding + 1, r->finding + 1);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n</details>\n");
}

/* The outcomes' counts, and what each means (the words of --help, the
 * man page and the README). */
static void html_legend(FILE *f, const size_t *counts)
{
	fprintf(f, "<div class=\"legend\">");
	for (int k = 0; k < O_COUNT; k++) {
		enum outcome o = bar_order[k];
		fprintf(f, "<span class=\"o-%s%s\">%s %zu</span>", outcome_name[o],
		        counts[o] ? "" : " zero", outcome_name[o], counts[o]);
	}
	fprintf(f, "</div>\n<dl class=\"defs\">");
	for (int k = 0; k < O_COUNT; k++) {
		enum outcome o = bar_order[k];
		fprintf(f, "<dt>%s</dt><dd>", outcome_name[o]);
		markup_esc(f, outcome_help[o], false);
		fprintf(f, "</dd>");
	}
	fprintf(f, "</dl>\n");
}

/* The distinct abort sites, as the console lists them (aborts.c): not
 * findings, but each one a user should check is deliberate. */
static void html_abort_sites(FILE *f)
{
	struct abort_site *sites;
	size_t n = aborts_find(&sites);
	if (n)
		fprintf(f, "<section class=\"shared\" id=\"aborts\">\n<h2>Abort sites</h2>\n"
		           "<p class=\"note\">Runs that ended by abort() after the failure: the "
		           "program chose to stop, so they are not findings; check each is "
		           "deliberate.</p>\n");
	for (size_t k = 0; k < n; k++) {
		const struct abort_site *a = &sites[k];
		struct membuf m;
		FILE *w = membuf_open(&m);
		if (a->has_aborter)
			frames_words(w, &a->aborter);
		else
			fputs(sweep.runs[a->first].crash_top[0] ? sweep.runs[a->first].crash_top
			                                        : "-",
			      w);
		fputs(" aborted for the allocation of ", w);
		if (a->has_alloc)
			frames_words(w, &a->alloc);
		else
			fputs("-", w);
		fprintf(f,
		        "<div class=\"site abort\"><p><strong>[A%zu] %zu run%s</strong>: ", k + 1,
		        a->count, a->count == 1 ? "" : "s");
		markup_flush(&m, f, false);
		fprintf(f, "</p>\n<pre class=\"repro\">");
		w = membuf_open(&m);
		reproducer_print(w, &sweep.runs[a->first]);
		markup_flush(&m, f, false);
		fprintf(f, "</pre></div>\n");
	}
	if (n)
		fprintf(f, "</section>\n");
	free(sites);
}

/* One file with everything inline - no fonts, images or scripts to fetch -
 * so that it can be archived by CI and opened anywhere. */
void html_write(const char *path, const struct finding *fs, size_t nfs, const size_t *counts)
{
	struct report_head h;
	report_open(&h, path, counts, "%Y-%m-%d %H:%M:%S");
	FILE *f = h.f;
	struct hsites hs;
	html_sites_build(&hs);

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	           "<title>gfp-sweep: ");
	markup_esc(f, opt.argv[0], false);
	fprintf(f,
	        "</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>\n%s</style>\n"
	        /* Before the body: with the script, the table's rows past
	         * its first page are never laid out. */
	        "<script>document.documentElement.classList.add('js')</script>\n</head>\n"
	        "<body>\n<header>\n<h1>gfp-sweep: <code>",
	        html_style);
	markup_esc(f, opt.argv[0], false);
	fprintf(f, "</code></h1>\n");
	/* The merge with the interrupted sweeps passes sweep.interrupted and
	 * sweep.runs_done here. */
	html_interrupted(f, sweep.interrupted, sweep.runs_done, sweep.runs_planned);
	if (nfs)
		fprintf(f, "<p class=\"verdict bad\">%zu finding%s, from %zu run%s</p>\n", nfs,
		        nfs == 1 ? "" : "s", h.findings, h.findings == 1 ? "" : "s");
	else
		fprintf(f, "<p class=\"verdict good\">no crash, hang or silent data loss behind "
		           "any failure point</p>\n");
	html_settings(f, &h);
	html_legend(f, counts);
	fprintf(f, "</header>\n");

	html_abort_sites(f);

	fprintf(f,
	        "<section id=\"table\">\n<h2>Findings and failure points</h2>\n<p class=\"note\">"
	        "One row per finding, which opens onto its call paths, and one per call site "
	        "and other outcome. Click a column to sort; the filters and the order are kept "
	        "in the address, so a link shows the same rows.</p>\n");
	html_table(f, &hs, fs, nfs);
	fprintf(f, "</section>\n");

	fprintf(f, "<section id=\"chart\">\n<h2>Outcomes per call site</h2>\n<p class=\"note\">"
	           "One bar per site, findings first; hover over a segment for its failure "
	           "points.</p>\n");
	html_chart(f, &hs, nfs);
	fprintf(f, "</section>\n");

	fprintf(f, "<section id=\"findings\">\n<h2>Findings</h2>\n");
	if (!nfs)
		fprintf(f, "<p>None.</p>\n");
	for (size_t fi = 0; fi < nfs; fi++)
		html_finding(f, fs, nfs, fi);
	fprintf(f, "</section>\n");

	html_runs(f);
	fprintf(f,
	        "<footer>gfp-sweep %s<span id=\"ready\"></span></footer>\n<script>\n%s</script>\n"
	        "</body>\n</html>\n",
	        GFP_VERSION, html_script);
	html_sites_free(&hs);
	report_done(&h.out);
}
