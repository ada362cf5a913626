/*
 * html-table.c - the page's table of failure points, which its script
 * sorts, filters and pages (every row is there without the script), and
 * the crash sites that several finding groups share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"

/* ------------------------------------------------------------------------
 * Crash sites that several groups share
 * ---------------------------------------------------------------------- */

struct top_frame {
	FILE *f;
	const char *top; /* "module+offset symbol" */
	bool done;
};

/* The crash site's frame in the crash's backtrace, as the console prints
 * it (frames.c print_crash_top). */
static void top_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct top_frame *t = ctx;
	if (!fr || t->done)
		return;
	if (frame_is_top(fr, t->top)) {
		html_frame(t->f, line, len, fr);
		t->done = true;
	}
}

static const char *crash_top(const struct group *groups, size_t g)
{
	const struct run *r = &runs[groups[g].first];
	return r->outcome == O_CRASH ? r->crash_top : "";
}

/* As the console's digest (tool_crash_sites_digest): each crash site that
 * two groups or more share, once, at its first group. */
void html_shared_sites(FILE *f, const struct group *groups, size_t ngroups)
{
	bool header = false;
	for (size_t g = 0; g < ngroups; g++) {
		const char *top = crash_top(groups, g);
		size_t n = 0, total = 0;
		bool seen = false;
		for (size_t h = 0; top[0] && h < ngroups && !seen; h++) {
			if (strcmp(crash_top(groups, h), top) != 0)
				continue;
			seen = h < g;
			n++;
			total += groups[h].count;
		}
		if (seen || n < 2)
			continue;
		if (!header)
			fprintf(
			    f, "<section class=\"shared\" id=\"shared\">\n<h2>Crash sites that "
			       "several groups share</h2>\n<p class=\"note\">One bug, many failure "
			       "points: each of these sites crashed after more than one failed "
			       "allocation.</p>\n");
		header = true;
		fprintf(f, "<div class=\"site\"><p><strong>%zu groups, %zu runs</strong>: groups",
		        n, total);
		for (size_t h = g; h < ngroups; h++)
			if (strcmp(crash_top(groups, h), top) == 0)
				fprintf(f, " <a href=\"#g%zu\">[%zu]</a>", h + 1, h + 1);
		fprintf(f, "</p>\n<pre class=\"top\">");
		const struct run *r = &runs[groups[g].first];
		struct top_frame t = {f, top, false};
		each_frame(r->crash_frames, true, top_frame, &t);
		if (!t.done) {
			esc(f, top, false);
			fputc('\n', f);
		}
		fprintf(f, "</pre></div>\n");
	}
	if (header)
		fprintf(f, "</section>\n");
}

/* The distinct abort sites, as the console lists them (aborts.c): not
 * findings, but each one a user should check is deliberate. */
void html_abort_sites(FILE *f)
{
	struct abort_site *sites;
	size_t n = abort_sites(&sites);
	if (n)
		fprintf(f, "<section class=\"shared\" id=\"aborts\">\n<h2>Abort sites</h2>\n"
		           "<p class=\"note\">Runs that ended by abort() after the failure: the "
		           "program chose to stop, so they are not findings; check each is "
		           "deliberate.</p>\n");
	for (size_t k = 0; k < n; k++) {
		const struct abort_site *a = &sites[k];
		struct membuf m;
		FILE *w = mem_open(&m);
		if (a->has_aborter)
			frame_words(w, &a->aborter);
		else
			fputs(runs[a->first].crash_top[0] ? runs[a->first].crash_top : "-", w);
		fputs(" aborted for the allocation of ", w);
		if (a->has_alloc)
			frame_words(w, &a->alloc);
		else
			fputs("-", w);
		fprintf(f, "<div class=\"site abort\"><p><strong>[A%zu] %zu run%s</strong>: ", k + 1,
		        a->count, a->count == 1 ? "" : "s");
		mem_flush(&m, f, false);
		fprintf(f, "</p>\n<pre class=\"repro\">");
		w = mem_open(&m);
		reproducer(w, &runs[a->first]);
		mem_flush(&m, f, false);
		fprintf(f, "</pre></div>\n");
	}
	if (n)
		fprintf(f, "</section>\n");
	free(sites);
}

/* ------------------------------------------------------------------------
 * The table of failure points
 * ---------------------------------------------------------------------- */

/* One row: outcome, function, file:line, module, site, failure points,
 * runs, group (0: none). */
static void row(FILE *f, enum outcome o, const struct hsite *site,
                bool (*keep)(size_t, const void *), const void *ctx, size_t count, size_t group)
{
	const struct where *w = &site->w;
	fprintf(f,
	        "<tr data-o=\"%s\"><td><span class=\"pill o-%s\">%s</span></td><td class=\"fn\">",
	        outcome_name[o], outcome_name[o], outcome_name[o]);
	esc(f, w->fn, false);
	if (w->via[0]) {
		fprintf(f, "<small> via ");
		esc(f, w->via, false);
		fprintf(f, "</small>");
	}
	fprintf(f, "</td><td class=\"file\"");
	if (w->path[0]) {
		fprintf(f, " title=\"");
		esc(f, w->path, true);
		fputc('"', f);
	}
	fputc('>', f);
	esc(f, w->file, false);
	fprintf(f, "</td><td class=\"mod\">");
	esc(f, w->mod, false);
	fprintf(f, "</td><td><code>%s</code></td><td class=\"hits\">",
	        site->key[0] ? site->key : "(none)");
	html_points(f, keep, ctx, 12);
	fprintf(f, "</td><td class=\"num\">%zu</td><td>", count);
	if (group)
		fprintf(f, "<a href=\"#g%zu\">[%zu]</a>", group, group);
	fprintf(f, "</td></tr>\n");
}

static const char *const columns[][2] = {
    {"outcome", "outcome"}, {"function", "function"},   {"file", "file:line"}, {"module", "module"},
    {"site", "site"},       {"hits", "failure points"}, {"runs", "runs"},      {"", "group"},
};

/* The controls the script shows: outcomes, two text filters, the count. */
static void filters(FILE *f, const struct hsites *hs)
{
	size_t n[O_COUNT] = {0};
	for (size_t s = 0; s < hs->n; s++)
		for (int o = 0; o < O_COUNT; o++)
			n[o] += hs->s[s].n[o];
	fprintf(f, "<form class=\"filters\" id=\"filters\" hidden>\n<div class=\"outcomes\" "
	           "role=\"group\" aria-label=\"outcomes\">");
	for (int k = 0; k < O_COUNT; k++) {
		enum outcome o = bar_order[k];
		if (n[o])
			fprintf(f,
			        "<label class=\"chip o-%s\"><input type=\"checkbox\" "
			        "name=\"outcome\" value=\"%s\" checked>%s</label>",
			        outcome_name[o], outcome_name[o], outcome_name[o]);
	}
	fprintf(f, "</div>\n<label class=\"text\">function or file <input type=\"search\" "
	           "name=\"function\" placeholder=\"make_title, foo.c:12\"></label>\n"
	           "<label class=\"text\">module <input type=\"search\" name=\"module\" "
	           "placeholder=\"libfoo\"></label>\n<button type=\"reset\">Reset</button>\n"
	           "<output id=\"shown\"></output>\n</form>\n");
}

void html_table(FILE *f, const struct hsites *hs, const struct group *groups, size_t ngroups)
{
	filters(f, hs);
	fprintf(f, "<div class=\"scroll\"><table class=\"points\" id=\"points\">\n<thead><tr>");
	for (size_t c = 0; c < sizeof(columns) / sizeof(columns[0]); c++)
		if (columns[c][0][0])
			fprintf(f,
			        "<th data-sort=\"%s\"><button type=\"button\">%s"
			        "</button></th>",
			        columns[c][0], columns[c][1]);
		else
			fprintf(f, "<th>%s</th>", columns[c][1]);
	fprintf(f, "</tr></thead>\n<tbody>\n");
	for (size_t g = 0; g < ngroups; g++) {
		long id = (long)g;
		const struct run *r = &runs[groups[g].first];
		row(f, r->outcome, &hs->s[hs->of_run[groups[g].first]], run_in_group, &id,
		    groups[g].count, g + 1);
	}
	for (size_t s = 0; s < hs->n; s++)
		for (int k = 0; k < O_COUNT; k++) {
			enum outcome o = bar_order[k];
			if (is_finding(o) || !hs->s[s].n[o])
				continue;
			struct site_runs so = {hs, s, o};
			row(f, o, &hs->s[s], run_at_site, &so, hs->s[s].n[o], 0);
		}
	fprintf(f, "</tbody>\n</table></div>\n<nav class=\"pager\" id=\"pager\" hidden><button "
	           "type=\"button\" data-step=\"-1\">&lsaquo; previous</button><span></span>"
	           "<button type=\"button\" data-step=\"1\">next &rsaquo;</button></nav>\n");
}
