/*
 * html.c - --html: one self-contained page with a bar per call site and
 * each finding group with its backtraces and reproducer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "gfp_build.h"
#include "sweep.h"

/* Bars in the order findings come first: crash, hang, silent, then the
 * runs that went well, unreached last. */
static const enum outcome bar_order[O_COUNT] = {O_CRASH,   O_HANG, O_SILENT,   O_ABORT,
                                                O_HANDLED, O_OK,   O_UNREACHED};

static const char html_style[] =
    ":root{--ok:#2f9e5b;--handled:#9ccc65;--abort:#5b8de6;--silent:#e89a1c;"
    "--crash:#d83b3b;--hang:#8e44ad;--unreached:#b8b8b8;--fg:#1f2328;--mute:#656d76;"
    "--line:#d8dee4;--code:#f6f8fa}\n"
    "*{box-sizing:border-box}\n"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);"
    "margin:0 auto;max-width:1240px;padding:18px 24px 40px}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
    "border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:0 0 4px}"
    "h4{font-size:13px;margin:10px 0 2px;color:var(--mute)}\n"
    "code,pre{font:12.5px/1.4 ui-monospace,'DejaVu Sans Mono',monospace}\n"
    "pre{background:var(--code);border:1px solid var(--line);border-radius:6px;"
    "padding:8px 10px;margin:0;white-space:pre-wrap;overflow-wrap:anywhere}\n"
    ".verdict{font-size:15px;margin:0 0 12px}.verdict.bad{color:var(--crash)}"
    ".verdict.good{color:var(--ok)}\n"
    "table.kv{border-collapse:collapse}table.kv th{text-align:left;color:var(--mute);"
    "font-weight:500;padding:2px 16px 2px 0;vertical-align:top}table.kv td{padding:2px 0}\n"
    ".legend{display:flex;flex-wrap:wrap;gap:6px;margin:12px 0 4px}"
    ".legend span{border-radius:12px;padding:2px 10px;color:#fff;font-weight:600}"
    ".legend span.zero{opacity:.35}\n"
    ".o-ok{background:var(--ok)}.o-handled{background:var(--handled)}"
    ".o-abort{background:var(--abort)}.o-silent{background:var(--silent)}"
    ".o-crash{background:var(--crash)}.o-hang{background:var(--hang)}"
    ".o-unreached{background:var(--unreached)}"
    ".legend .o-handled,.bar .o-handled,.legend .o-unreached,.bar .o-unreached{"
    "color:#1f2328}\n"
    ".note{color:var(--mute);margin:0 0 8px}\n"
    ".chart{display:grid;grid-template-columns:max-content minmax(10em,26em) minmax(200px,1fr)"
    " max-content;gap:3px 12px;align-items:center}\n"
    ".chart .head{color:var(--mute);font-size:12px;border-bottom:1px solid var(--line)}\n"
    ".chart .where{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\n"
    ".bar{display:flex;height:18px;border-radius:4px;overflow:hidden;background:#eee}"
    ".bar span{min-width:3px;color:#fff;font-size:11px;line-height:18px;text-align:center;"
    "overflow:hidden;border-right:1px solid #fff}.bar span:last-child{border-right:0}\n"
    ".n{color:var(--mute);font-size:12px;white-space:nowrap}.n a{margin-left:4px}\n"
    "a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}\n"
    ".group{border:1px solid var(--line);border-left:6px solid var(--crash);border-radius:6px;"
    "padding:10px 14px;margin:12px 0}\n"
    ".group.silent{border-left-color:var(--silent)}.group.hang{border-left-color:var(--hang)}\n"
    ".meta{margin:0 0 4px;color:var(--mute)}.yes{color:var(--ok);font-weight:600}"
    ".no{color:var(--crash);font-weight:600}\n"
    "pre .prog{color:var(--fg);font-weight:600}pre .lib,pre .loc{color:var(--mute)}\n"
    "table.runs{border-collapse:collapse;margin-top:8px}table.runs td,table.runs th{"
    "padding:1px 12px 1px 0;text-align:left}table.runs th{color:var(--mute);font-weight:500}\n"
    "details summary{cursor:pointer;margin-top:24px;font-weight:600}\n"
    "footer{margin-top:28px;color:var(--mute);font-size:12px}\n";

static void html_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	FILE *f = ctx;
	if (!fr) {
		esc_n(f, line, len, false);
	} else if (fr->src[0]) {
		fprintf(f, "    <span class=\"prog\">");
		esc(f, fr->src, false);
		fprintf(f, "</span> <span class=\"loc\">(");
		esc(f, fr->mod, false);
		fputc('+', f);
		esc(f, fr->off, false);
		fprintf(f, ")</span>");
	} else {
		fprintf(f, "    <span class=\"lib\">");
		esc(f, fr->sym, false);
		fprintf(f, "</span>%s<span class=\"loc\">(", fr->sym[0] ? " " : "");
		esc(f, fr->mod, false);
		fputc('+', f);
		esc(f, fr->off, false);
		fprintf(f, ")</span>");
	}
	fputc('\n', f);
}

/* Where a site is, for its bar: the first frame in the program (its
 * function and source line, the innermost of an inlined chain) and the
 * library function it called there; else the first frame outside libc and
 * the shim. full gets the whole chain. */
struct where {
	char label[400], full[900], via[64];
	bool found;
};

static void where_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct where *w = ctx;
	(void)line;
	(void)len;
	if (!fr || w->found)
		return;
	if (strcmp(fr->mod, prog_base()) != 0) {
		/* The outermost library frame before the program's is what
		 * the program called: strdup, asprintf. */
		int n = (int)strcspn(fr->sym, "+");
		if (n)
			snprintf(w->via, sizeof(w->via), "%.*s", n, fr->sym);
		if (!w->label[0] && strcmp(fr->mod, "libc.so.6") != 0 &&
		    strcmp(fr->mod, LIB_NAME) != 0) {
			snprintf(w->label, sizeof(w->label), "%s (%s)",
			         fr->sym[0] ? fr->sym : fr->off, fr->mod);
			snprintf(w->full, sizeof(w->full), "%s (%s+%s)", fr->sym, fr->mod, fr->off);
		}
		return;
	}
	const char *chain = fr->src[0] ? fr->src : fr->sym;
	if (chain[0]) {
		snprintf(w->label, sizeof(w->label), "%.*s", (int)strcspn(chain, "<"), chain);
		size_t l = strlen(w->label);
		while (l && w->label[l - 1] == ' ')
			w->label[--l] = '\0';
	} else {
		/* a stripped program: its module and offset are all there is */
		snprintf(w->label, sizeof(w->label), "%s+%s", fr->mod, fr->off);
	}
	snprintf(w->full, sizeof(w->full), "%s (%s+%s)", chain, fr->mod, fr->off);
	if (w->via[0]) {
		size_t l = strlen(w->label), k = strlen(w->full);
		snprintf(w->label + l, sizeof(w->label) - l, " via %s", w->via);
		snprintf(w->full + k, sizeof(w->full) - k, " via %s", w->via);
	}
	w->found = true;
}

static void site_where(const char *site, struct where *w)
{
	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < nruns; i++)
		if (runs[i].inj_frames[0] && strcmp(runs[i].inj_site, site) == 0) {
			each_frame(runs[i].inj_frames, false, where_frame, w);
			return;
		}
}

struct bar {
	char site[17];
	size_t n[O_COUNT], total, findings, order;
};

static int bar_cmp(const void *a, const void *b)
{
	const struct bar *x = a, *y = b;
	if (x->findings != y->findings)
		return x->findings > y->findings ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The failure points of one outcome at a site: "hit 1, hit 3". */
static void bar_points(FILE *f, const struct bar *b, enum outcome o)
{
	size_t shown = 0;
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		const char *key = r->site[0] ? r->site : r->inj_site;
		if (r->outcome != o || strcmp(key, b->site) != 0)
			continue;
		if (shown == 12) {
			fprintf(f, ", ...");
			break;
		}
		fprintf(f, "%s%s %llu", shown++ ? ", " : "", point_kind(r),
		        (unsigned long long)r->hit);
	}
}

static void html_chart(FILE *f, const struct group *groups, size_t ngroups)
{
	struct bar *bars = calloc(nruns + 1, sizeof(*bars));
	size_t nbars = 0;
	if (!bars)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		const char *key = r->site[0] ? r->site : r->inj_site;
		size_t b = 0;
		while (b < nbars && strcmp(bars[b].site, key) != 0)
			b++;
		if (b == nbars) {
			snprintf(bars[b].site, sizeof(bars[b].site), "%s", key);
			bars[b].order = nbars++;
		}
		bars[b].n[r->outcome]++;
		bars[b].total++;
		bars[b].findings += is_finding(r->outcome);
	}
	qsort(bars, nbars, sizeof(*bars), bar_cmp);
	fprintf(f, "<div class=\"chart\">\n<span class=\"head\">site</span><span class=\"head\">"
	           "first frame in the program</span><span class=\"head\">outcomes of its failure "
	           "points</span><span class=\"head\">runs, groups</span>\n");
	for (size_t b = 0; b < nbars; b++) {
		struct where w;
		site_where(bars[b].site, &w);
		fprintf(f, "<code>%s</code>", bars[b].site[0] ? bars[b].site : "(none)");
		fprintf(f, "<span class=\"where\" title=\"");
		esc(f, w.full, true);
		fprintf(f, "\">");
		const char *none = bars[b].site[0] ? "(not reached)" : "no allocation failed";
		esc(f, w.label[0] ? w.label : none, false);
		fprintf(f, "</span><div class=\"bar\">");
		for (int k = 0; k < O_COUNT; k++) {
			enum outcome o = bar_order[k];
			if (!bars[b].n[o])
				continue;
			fprintf(f, "<span class=\"o-%s\" style=\"flex-grow:%zu\" title=\"",
			        outcome_name[o], bars[b].n[o]);
			struct membuf m;
			FILE *t = mem_open(&m);
			fprintf(t, "%s: ", outcome_name[o]);
			bar_points(t, &bars[b], o);
			mem_flush(&m, f, true);
			fprintf(f, "\">%zu</span>", bars[b].n[o]);
		}
		fprintf(f, "</div><span class=\"n\">%zu", bars[b].total);
		for (size_t g = 0; g < ngroups; g++)
			if (strcmp(runs[groups[g].first].inj_site, bars[b].site) == 0 &&
			    bars[b].site[0])
				fprintf(f, "<a href=\"#g%zu\">[%zu]</a>", g + 1, g + 1);
		fprintf(f, "</span>\n");
	}
	fprintf(f, "</div>\n");
	free(bars);
}

static void html_group(FILE *f, const struct group *groups, size_t g)
{
	const struct run *r = &runs[groups[g].first];
	fprintf(f, "<article class=\"group %s\" id=\"g%zu\">\n<h3>[%zu] %s",
	        outcome_name[r->outcome], g + 1, g + 1, outcome_name[r->outcome]);
	if (r->signal)
		fprintf(f, " (signal %d %s)", r->signal, strsignal(r->signal));
	fprintf(f,
	        " in %zu run%s</h3>\n<p class=\"meta\">allocation failure at site "
	        "<code>%s</code>, %s %llu &middot; reproducer ",
	        groups[g].count, groups[g].count == 1 ? "" : "s",
	        r->inj_site[0] ? r->inj_site : "-", point_kind(r), (unsigned long long)r->hit);
	fputs(groups[g].confirmed ? "<span class=\"yes\">confirmed</span>"
	                          : "<span class=\"no\">NOT reproduced</span>",
	      f);
	fprintf(f, " &middot; runs: ");
	size_t shown = 0;
	for (size_t i = groups[g].first; i < nruns; i++) {
		if (runs[i].group != (long)g)
			continue;
		if (shown == 20) {
			fprintf(f, ", ...");
			break;
		}
		fprintf(f, "%s%s %llu", shown++ ? ", " : "", point_kind(&runs[i]),
		        (unsigned long long)runs[i].hit);
	}
	fprintf(f, "</p>\n<h4>The failed allocation</h4>\n<pre>");
	each_frame(r->inj_frames, false, html_frame, f);
	fprintf(f, "</pre>\n");
	if (r->crash_frames[0]) {
		fprintf(f, "<h4>The crash</h4>\n<pre>");
		each_frame(r->crash_frames, true, html_frame, f);
		fprintf(f, "</pre>\n");
	}
	fprintf(f, "<h4>Reproduce</h4>\n<pre>");
	struct membuf m;
	reproducer(mem_open(&m), r);
	mem_flush(&m, f, false);
	fprintf(f, "</pre>\n</article>\n");
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

/* One file with everything inline - no scripts, fonts or images to fetch -
 * so that it can be archived by CI and opened anywhere. */
void write_html(const char *path, const struct group *groups, size_t ngroups, const size_t *counts)
{
	struct report_head h;
	report_open(&h, path, counts, "%Y-%m-%d %H:%M:%S");
	FILE *f = h.f;
	size_t findings = h.findings;

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	           "<title>gfp-sweep: ");
	esc(f, opt.argv[0], false);
	fprintf(f,
	        "</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>\n%s</style>\n</head>\n"
	        "<body>\n<h1>gfp-sweep: <code>",
	        html_style);
	esc(f, opt.argv[0], false);
	fprintf(f, "</code></h1>\n");
	if (ngroups)
		fprintf(f, "<p class=\"verdict bad\">%zu finding%s in %zu group%s</p>\n", findings,
		        findings == 1 ? "" : "s", ngroups, ngroups == 1 ? "" : "s");
	else
		fprintf(f, "<p class=\"verdict good\">no crash, hang or silent data loss behind "
		           "any failure point</p>\n");

	html_settings(f, &h);
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

	fprintf(f, "<h2>Outcomes per call site</h2>\n<p class=\"note\">One bar per site, "
	           "findings first; hover over a segment for its failure points.</p>\n");
	html_chart(f, groups, ngroups);

	fprintf(f, "<h2>Findings</h2>\n");
	if (!ngroups)
		fprintf(f, "<p>None.</p>\n");
	for (size_t g = 0; g < ngroups; g++)
		html_group(f, groups, g);

	fprintf(f,
	        "<details>\n<summary>All %zu runs</summary>\n<table class=\"runs\">\n<tr><th>#"
	        "</th><th>site</th><th>failure point</th><th>outcome</th><th>exit</th><th>time"
	        "</th></tr>\n",
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
	fprintf(f, "</table>\n</details>\n<footer>gfp-sweep %s</footer>\n</body>\n</html>\n",
	        GFP_VERSION);
	if (fclose(f) != 0)
		die(EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
}
