/*
 * html-table.c - the page's table of findings and failure points, which
 * its script sorts, filters and pages (every row is there without the
 * script): a row per finding, opening onto its call paths, and a row per
 * call site and other outcome.
 */
#include <stdio.h>
#include <stdlib.h>

#include "html-chart.h"
#include "html-table.h"

/* The cells a row starts with: outcome, then function (its leading text
 * the name the script sorts by; small, what else to say), file:line (the
 * whole path as its title) and module. */
static void row_start(FILE *f, enum outcome o, const char *fn, const char *more, const char *file,
                      const char *path, const char *mod)
{
	fprintf(f,
	        "<tr data-o=\"%s\"><td><span class=\"pill o-%s\">%s</span></td><td class=\"fn\">",
	        outcome_name[o], outcome_name[o], outcome_name[o]);
	markup_esc(f, fn, false);
	if (more[0]) {
		fprintf(f, "<small> ");
		markup_esc(f, more, false);
		fprintf(f, "</small>");
	}
	fprintf(f, "</td><td class=\"file\"");
	if (path[0]) {
		fprintf(f, " title=\"");
		markup_esc(f, path, true);
		fputc('"', f);
	}
	fputc('>', f);
	markup_esc(f, file, false);
	fprintf(f, "</td><td class=\"mod\">");
	markup_esc(f, mod, false);
	fprintf(f, "</td>");
}

/* One row per site and outcome that is no finding. */
static void site_row(FILE *f, enum outcome o, const struct hsite *site, const struct site_runs *so,
                     size_t count)
{
	const struct where *w = &site->w;
	char via[80] = "";
	if (w->via[0])
		snprintf(via, sizeof(via), "via %s", w->via);
	row_start(f, o, w->fn, via, w->file, w->path, w->mod);
	fprintf(f, "<td><code>%s</code></td><td class=\"hits\">",
	        site->key[0] ? site->key : "(none)");
	html_chart_points(f, html_sites_run_at, so, 12);
	fprintf(f, "</td><td class=\"num\">%zu</td><td></td></tr>\n", count);
}

/* A finding's row: the function of its state (a crash's, a hang's) or of
 * its first call path (a silent loss's), the title, and its call paths. */
static void finding_row(FILE *f, const struct hsites *hs, const struct finding *fs, size_t fi)
{
	const struct run *r = &sweep.runs[fs[fi].first];
	struct where w = hs->s[hs->of_run[fs[fi].first]].w;
	struct state st;
	if (state_of(r, &st)) {
		size_t k = 0;
		while (k + 1 < st.n && !st.prog[k])
			k++;
		html_sites_where(&st.frame[k], &w);
		snprintf(w.fn, sizeof(w.fn), "%s", st.name[k]);
	}
	struct membuf m;
	findings_title(membuf_open(&m), r);
	fclose(m.f);
	row_start(f, r->outcome, w.fn, m.buf, w.file, w.path, w.mod);
	free(m.buf);
	struct path *p;
	size_t np = findings_paths(fi, &p);
	fprintf(f,
	        "<td><code>%s</code></td><td class=\"hits\"><details><summary>%zu call path%s"
	        "</summary><ul>",
	        r->inj_site[0] ? r->inj_site : "(none)", np, np == 1 ? "" : "s");
	for (size_t k = 0; k < np; k++) {
		const struct run *q = &sweep.runs[p[k].first];
		fprintf(f, "<li>");
		words_path(membuf_open(&m), q);
		markup_flush(&m, f, false);
		fprintf(f, " <code>%s</code>: ", q->inj_site[0] ? q->inj_site : "-");
		html_chart_points(f, findings_in_path, &p[k], 12);
		fprintf(f, "</li>");
	}
	free(p);
	fprintf(f,
	        "</ul></details></td><td class=\"num\">%zu</td><td><a href=\"#f%zu\">[%zu]</a>"
	        "</td></tr>\n",
	        fs[fi].count, fi + 1, fi + 1);
}

static const char *const columns[][2] = {
    {"outcome", "outcome"}, {"function", "function"},   {"file", "file:line"}, {"module", "module"},
    {"site", "site"},       {"hits", "failure points"}, {"runs", "runs"},      {"", "finding"},
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

void html_table(FILE *f, const struct hsites *hs, const struct finding *fs, size_t nfs)
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
	for (size_t fi = 0; fi < nfs; fi++)
		finding_row(f, hs, fs, fi);
	for (size_t s = 0; s < hs->n; s++)
		for (int k = 0; k < O_COUNT; k++) {
			enum outcome o = bar_order[k];
			if (is_finding(o) || !hs->s[s].n[o])
				continue;
			struct site_runs so = {hs, s, o};
			site_row(f, o, &hs->s[s], &so, hs->s[s].n[o]);
		}
	fprintf(f, "</tbody>\n</table></div>\n<nav class=\"pager\" id=\"pager\" hidden><button "
	           "type=\"button\" data-step=\"-1\">&lsaquo; previous</button><span></span>"
	           "<button type=\"button\" data-step=\"1\">next &rsaquo;</button></nav>\n");
}
