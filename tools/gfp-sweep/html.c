/*
 * html.c - --html: one self-contained page people can work in: the
 * summary, the crash sites several groups share, a table of failure points
 * to sort and filter (its state in the URL's fragment), a bar per call site,
 * and each finding group with its backtraces, evidence and a reproducer to
 * copy. Inline CSS and script, nothing fetched: CI archives it, file://
 * opens it, and without the script every row is still there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "gfp_build.h"
#include "html.h"

/* With more groups than this their backtraces start folded. */
#define OPEN_GROUPS 8

void html_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	FILE *f = ctx;
	/* No indent: the <pre> sets the frames apart. */
	if (!fr) {
		size_t sp = strspn(line, " ");
		esc_n(f, line + (sp < len ? sp : len), sp < len ? len - sp : 0, false);
		fputc('\n', f);
		return;
	}
	/* As the console's frame_print: "function file:line (module+offset)",
	 * the symbol for the function without a source line, or
	 * "module+offset" alone; the program's own frames stand out. */
	const char *text = fr->src[0] ? fr->src : fr->sym;
	if (text[0]) {
		fprintf(f, "<span class=\"%s\">",
		        strcmp(fr->mod, prog_base()) == 0 ? "prog" : "lib");
		esc(f, text, false);
		fprintf(f, "</span> ");
	}
	fprintf(f, "<span class=\"loc\">%s", text[0] ? "(" : "");
	esc(f, fr->mod, false);
	fputc('+', f);
	esc(f, fr->off, false);
	fprintf(f, "%s</span>\n", text[0] ? ")" : "");
}

/* classify.c fills ev for a silent run; its line is 1-based, so a zeroed
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
	esc(f, ev->expected, false);
	fprintf(f, "</span>\n<span class=\"act\">+ ");
	esc(f, ev->actual, false);
	fprintf(f, "</span></pre></div>\n");
}

static void html_group(FILE *f, const struct hsites *hs, const struct group *groups, size_t ngroups,
                       size_t g)
{
	const struct run *r = &runs[groups[g].first];
	const struct where *w = &hs->s[hs->of_run[groups[g].first]].w;
	fprintf(f, "<article class=\"group %s\" id=\"g%zu\">\n<h3><a href=\"#g%zu\">[%zu]</a> %s",
	        outcome_name[r->outcome], g + 1, g + 1, g + 1, outcome_name[r->outcome]);
	if (r->signal)
		fprintf(f, " (signal %d %s)", r->signal, strsignal(r->signal));
	fprintf(f, " in %zu run%s", groups[g].count, groups[g].count == 1 ? "" : "s");
	if (w->label[0]) {
		fprintf(f, " <span class=\"at\">at ");
		esc(f, w->label, false);
		fprintf(f, "</span>");
	}
	fprintf(f,
	        "</h3>\n<p class=\"meta\">allocation failure at site <code>%s</code>, %s %llu "
	        "&middot; reproducer ",
	        r->inj_site[0] ? r->inj_site : "-", point_kind(r), (unsigned long long)r->hit);
	fputs(!groups[g].rerun      ? "<span class=\"no\">not re-run: interrupted</span>"
	      : groups[g].confirmed ? "<span class=\"yes\">confirmed</span>"
	                            : "<span class=\"no\">NOT reproduced</span>",
	      f);
	fprintf(f, " &middot; runs: ");
	long id = (long)g;
	html_points(f, run_in_group, &id, 20);
	fprintf(f, "</p>\n");
	if (has_evidence(r))
		html_evidence(f, &r->ev);
	fprintf(f, "<details class=\"frames\"%s><summary>backtraces</summary>\n",
	        ngroups <= OPEN_GROUPS ? " open" : "");
	fprintf(f, "<h4>The failed allocation</h4>\n<pre>");
	each_frame(r->inj_frames, false, html_frame, f);
	fprintf(f, "</pre>\n");
	if (r->crash_frames[0]) {
		fprintf(f, "<h4>The crash</h4>\n<pre>");
		each_frame(r->crash_frames, true, html_frame, f);
		fprintf(f, "</pre>\n");
	}
	/* The reproducer stays a bare <pre>: its text is the command, which
	 * the Copy button (shown by the script) copies or selects. */
	fprintf(f, "</details>\n<h4>Reproduce</h4>\n<div class=\"repro\"><pre>");
	struct membuf m;
	reproducer(mem_open(&m), r);
	mem_flush(&m, f, false);
	fprintf(f, "</pre><button type=\"button\" class=\"copy\" hidden>Copy</button></div>\n"
	           "</article>\n");
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
	command_line(mem_open(&m));
	mem_flush(&m, f, false);
	fprintf(f, "</code></td></tr>\n<tr><th>mode</th><td>%s: %s</td></tr>\n", opt.mode,
	        strcmp(opt.mode, "nth") == 0 ? "fail every Nth eligible call"
	                                     : "fail the first, second and last hit of every site");
	fprintf(f,
	        "<tr><th>eligible calls</th><td>%llu</td></tr>\n<tr><th>call sites</th><td>%zu"
	        "</td></tr>\n<tr><th>runs</th><td>%zu",
	        (unsigned long long)eligible, nsites, nruns);
	if (opt.shard_n > 1)
		fprintf(f, " (shard %d/%d)", opt.shard_k, opt.shard_n);
	fprintf(f, ", %d at a time, timeout %.0f s; the sweep took %.1f s</td></tr>\n", opt.jobs,
	        run_timeout(), now() - opt.started);
	fprintf(f, "<tr><th>started</th><td>%s", h->stamp);
	if (h->host[0]) {
		fprintf(f, " on ");
		esc(f, h->host, false);
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
	    "<th>time</th></tr>\n",
	    nruns);
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		fprintf(f,
		        "<tr><td>%zu</td><td><code>%s</code></td><td>%s %llu</td><td>%s</td>"
		        "<td>",
		        i + 1,
		        r->inj_site[0] ? r->inj_site
		        : r->site[0]   ? r->site
		                       : "-",
		        point_kind(r), (unsigned long long)r->hit, outcome_name[r->outcome]);
		if (r->signal)
			fprintf(f, "signal %d", r->signal);
		else
			fprintf(f, "%d", r->status);
		fprintf(f, "</td><td>%.2f s</td></tr>\n", r->seconds);
	}
	fprintf(f, "</table>\n</details>\n");
}

static void html_legend(FILE *f, const size_t *counts)
{
	fprintf(f, "<div class=\"legend\">");
	for (int k = 0; k < O_COUNT; k++) {
		enum outcome o = bar_order[k];
		fprintf(f, "<span class=\"o-%s%s\">%s %zu</span>", outcome_name[o],
		        counts[o] ? "" : " zero", outcome_name[o], counts[o]);
	}
	fprintf(f, "</div>\n<p class=\"note\">ok: the output matched the recording run; handled: "
	           "a non-zero exit; abort: an abort the program chose; silent: exit 0 with "
	           "different output; crash: a signal or a failed memory check; hang: killed "
	           "after the timeout; unreached: the failure point was never reached.</p>\n");
}

/* One file with everything inline - no fonts, images or scripts to fetch -
 * so that it can be archived by CI and opened anywhere. */
void write_html(const char *path, const struct group *groups, size_t ngroups, const size_t *counts)
{
	struct report_head h;
	report_open(&h, path, counts, "%Y-%m-%d %H:%M:%S");
	FILE *f = h.f;
	size_t findings = h.findings;
	struct hsites hs;
	hsites_build(&hs);

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	           "<title>gfp-sweep: ");
	esc(f, opt.argv[0], false);
	fprintf(f,
	        "</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>\n%s</style>\n"
	        /* Before the body: with the script, the table's rows past
	         * its first page are never laid out. */
	        "<script>document.documentElement.classList.add('js')</script>\n</head>\n"
	        "<body>\n<header>\n<h1>gfp-sweep: <code>",
	        html_style);
	esc(f, opt.argv[0], false);
	fprintf(f, "</code></h1>\n");
	/* The merge with the interrupted sweeps passes opt.interrupted and
	 * opt.runs_done here. */
	html_interrupted(f, opt.interrupted, opt.runs_done, opt.runs_planned);
	if (ngroups)
		fprintf(f, "<p class=\"verdict bad\">%zu finding%s in %zu group%s</p>\n", findings,
		        findings == 1 ? "" : "s", ngroups, ngroups == 1 ? "" : "s");
	else
		fprintf(f, "<p class=\"verdict good\">no crash, hang or silent data loss behind "
		           "any failure point</p>\n");
	html_settings(f, &h);
	html_legend(f, counts);
	fprintf(f, "</header>\n");

	html_shared_sites(f, groups, ngroups);
	html_abort_sites(f);

	fprintf(f, "<section id=\"table\">\n<h2>Failure points</h2>\n<p class=\"note\">One row "
	           "per finding group, and per call site for each other outcome. Click a "
	           "column to sort; the filters and the order are kept in the address, so a "
	           "link shows the same rows.</p>\n");
	html_table(f, &hs, groups, ngroups);
	fprintf(f, "</section>\n");

	fprintf(f, "<section id=\"chart\">\n<h2>Outcomes per call site</h2>\n<p class=\"note\">"
	           "One bar per site, findings first; hover over a segment for its failure "
	           "points.</p>\n");
	html_chart(f, &hs, groups, ngroups);
	fprintf(f, "</section>\n");

	fprintf(f, "<section id=\"findings\">\n<h2>Findings</h2>\n");
	if (!ngroups)
		fprintf(f, "<p>None.</p>\n");
	for (size_t g = 0; g < ngroups; g++)
		html_group(f, &hs, groups, ngroups, g);
	fprintf(f, "</section>\n");

	html_runs(f);
	fprintf(f,
	        "<footer>gfp-sweep %s<span id=\"ready\"></span></footer>\n<script>\n%s</script>\n"
	        "</body>\n</html>\n",
	        GFP_VERSION, html_script);
	hsites_free(&hs);
	report_done(&h.out);
}
