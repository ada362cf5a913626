/*
 * html-chart.h - the page's chart of outcomes per call site (html-chart.c),
 * and the order and the failure points its bars, the legend and the table
 * show.
 */
#ifndef GFP_SWEEP_HTML_CHART_H
#define GFP_SWEEP_HTML_CHART_H

#include "html-sites.h"

/* Outcomes in the order findings come first: crash, hang, silent, then the
 * runs that went well, unreached last. Bars, legend and table use it. */
extern const enum outcome bar_order[O_COUNT];

/* ", "-separated hit (or call) numbers of the runs for which keep(i, ctx)
 * holds, at most max of them, then ", ..." */
void html_chart_points(FILE *f, bool (*keep)(size_t i, const void *ctx), const void *ctx,
                       size_t max);
void html_chart(FILE *f, const struct hsites *hs, size_t nfs);

#endif
