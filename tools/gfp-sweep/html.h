/*
 * html.h - what the files of gfp-sweep's HTML page share: html.c writes the
 * page and its findings, html-sites.c finds where each call site is,
 * html-chart.c draws the bars, html-table.c the table of findings and
 * failure points and the abort sites, html-assets.c holds the page's CSS
 * and script.
 */
#ifndef GFP_SWEEP_HTML_H
#define GFP_SWEEP_HTML_H

#include "sweep.h"

/* Outcomes in the order findings come first: crash, hang, silent, then the
 * runs that went well, unreached last. Bars, legend and table use it. */
extern const enum outcome bar_order[O_COUNT];

/* Where a site is: its first frame in the program (function, file:line,
 * module, the innermost of an inlined chain) and the library function it
 * called there; else the first frame outside libc and the shim. label is
 * the short form for the chart, full the whole chain for a tooltip; file is
 * "base.c:line", path the file's whole path and line. */
struct where {
	char label[400], full[900], via[64];
	char fn[200], file[300], path[600], mod[128];
	bool found;
};

/* The sites the runs failed (or reached) in the order of their first run,
 * with their outcomes; of_run[i] is run i's site. */
struct hsite {
	const char *key; /* "" for the runs of nth mode that failed nothing */
	size_t first, total, findings;
	size_t n[O_COUNT];
	struct where w;
};
struct hsites {
	struct hsite *s;
	size_t n;
	size_t *of_run;
};

const char *site_key(const struct run *r);
void hsites_build(struct hsites *hs);
void hsites_free(struct hsites *hs);

/* A frame line as the page shows it: the program's source lines bold. */
void html_frame(void *ctx, const char *line, size_t len, const struct frame *fr);
/* ", "-separated hit (or call) numbers of the runs for which keep(i, ctx)
 * holds, at most max of them, then ", ..." */
void html_points(FILE *f, bool (*keep)(size_t i, const void *ctx), const void *ctx, size_t max);
/* keep for html_points: run i is one of the finding *(const long *)ctx. */
bool run_in_finding(size_t i, const void *ctx);
/* fr's function, file:line, path and module into w. */
void where_of(const struct frame *fr, struct where *w);
/* keep for html_points: run i is one of a site's with outcome o. */
struct site_runs {
	const struct hsites *hs;
	size_t site;
	enum outcome o;
};
bool run_at_site(size_t i, const void *ctx);

void html_chart(FILE *f, const struct hsites *hs, size_t nfs);
void html_abort_sites(FILE *f);
void html_table(FILE *f, const struct hsites *hs, const struct finding *fs, size_t nfs);

extern const char html_style[], html_script[];

#endif
