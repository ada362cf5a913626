/*
 * html-chart.c - the page's chart: a bar of outcomes per call site, the
 * sites with findings first. A large program has hundreds of sites: past
 * CHART_BARS the rest share one bar, the table lists each of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html-chart.h"

#define CHART_BARS 40

const enum outcome bar_order[O_COUNT] = {O_CRASH,   O_HANG, O_SILENT,   O_ABORT,
                                         O_HANDLED, O_OK,   O_UNREACHED};

static const struct hsites *sort_hs;

static int bar_cmp(const void *a, const void *b)
{
	const struct hsite *x = &sort_hs->s[*(const size_t *)a],
	                   *y = &sort_hs->s[*(const size_t *)b];
	if (x->findings != y->findings)
		return x->findings > y->findings ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

void html_chart_points(FILE *f, bool (*keep)(size_t i, const void *ctx), const void *ctx,
                       size_t max)
{
	size_t shown = 0;
	const char *kind = "";
	for (size_t i = 0; i < sweep.nruns; i++) {
		if (!keep(i, ctx))
			continue;
		if (shown == max) {
			fprintf(f, ", ...");
			break;
		}
		/* "hit 1, 2, 6": the kind once, again only where it changes
		 * (nth mode tries the sites no call reached by their hits). */
		bool same = strcmp(kind, plan_point_kind(&sweep.runs[i])) == 0;
		kind = plan_point_kind(&sweep.runs[i]);
		fprintf(f, "%s%s%s%llu", shown++ ? ", " : "", same ? "" : kind, same ? "" : " ",
		        (unsigned long long)sweep.runs[i].hit);
	}
}

/* One bar's segments; points names the site whose failure points the
 * tooltips list, or is NULL for the bar of the remaining sites. */
static void bar(FILE *f, const size_t *n, const struct site_runs *points)
{
	fprintf(f, "<div class=\"bar\">");
	for (int k = 0; k < O_COUNT; k++) {
		enum outcome o = bar_order[k];
		if (!n[o])
			continue;
		fprintf(f, "<span class=\"o-%s\" style=\"flex-grow:%zu\" title=\"", outcome_name[o],
		        n[o]);
		struct membuf m;
		FILE *t = membuf_open(&m);
		fprintf(t, "%s: ", outcome_name[o]);
		if (points) {
			struct site_runs p = *points;
			p.o = o;
			html_chart_points(t, html_sites_run_at, &p, 12);
		} else {
			fprintf(t, "%zu run%s", n[o], n[o] == 1 ? "" : "s");
		}
		markup_flush(&m, f, true);
		fprintf(f, "\">%zu</span>", n[o]);
	}
	fprintf(f, "</div>");
}

static void site_bar(FILE *f, const struct hsites *hs, size_t s, size_t nfs)
{
	const struct hsite *site = &hs->s[s];
	fprintf(f, "<code>%s</code>", site->key[0] ? site->key : "(none)");
	fprintf(f, "<span class=\"where\" title=\"");
	markup_esc(f, site->w.full, true);
	fprintf(f, "\">");
	const char *none = site->key[0] ? "(not reached)" : "no allocation failed";
	markup_esc(f, site->w.label[0] ? site->w.label : none, false);
	fprintf(f, "</span>");
	bar(f, site->n, &(struct site_runs){hs, s, O_OK});
	fprintf(f, "<span class=\"n\">%zu", site->total);
	/* the findings its failure points are in */
	for (size_t fi = 0; fi < nfs && site->key[0]; fi++)
		for (size_t i = site->first; i < sweep.nruns; i++)
			if (hs->of_run[i] == s && sweep.runs[i].finding == (long)fi) {
				fprintf(f, "<a href=\"#f%zu\">[%zu]</a>", fi + 1, fi + 1);
				break;
			}
	fprintf(f, "</span>\n");
}

void html_chart(FILE *f, const struct hsites *hs, size_t nfs)
{
	size_t *order = calloc(hs->n + 1, sizeof(*order));
	if (!order)
		die(EXIT_USAGE, "out of memory");
	for (size_t s = 0; s < hs->n; s++)
		order[s] = s;
	sort_hs = hs;
	qsort(order, hs->n, sizeof(*order), bar_cmp);
	fprintf(f, "<div class=\"chart\">\n<span class=\"head\">site</span><span class=\"head\">"
	           "first frame in the program</span><span class=\"head\">outcomes of its failure "
	           "points</span><span class=\"head\">runs, findings</span>\n");
	size_t shown = hs->n > CHART_BARS ? CHART_BARS - 1 : hs->n;
	for (size_t k = 0; k < shown; k++)
		site_bar(f, hs, order[k], nfs);
	if (shown < hs->n) {
		size_t n[O_COUNT] = {0}, total = 0;
		for (size_t k = shown; k < hs->n; k++)
			for (int o = 0; o < O_COUNT; o++) {
				n[o] += hs->s[order[k]].n[o];
				total += hs->s[order[k]].n[o];
			}
		fprintf(f,
		        "<span class=\"rest\">%zu more sites</span><span class=\"where\">each one "
		        "in the <a href=\"#table\">table of failure points</a></span>",
		        hs->n - shown);
		bar(f, n, NULL);
		fprintf(f, "<span class=\"n\">%zu</span>\n", total);
	}
	fprintf(f, "</div>\n");
	free(order);
}
