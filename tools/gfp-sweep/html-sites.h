/*
 * html-sites.h - the call sites of gfp-sweep's HTML page (html-sites.c):
 * once each, which runs failed them, their outcomes, and where in the
 * program each one is.
 */
#ifndef GFP_SWEEP_HTML_SITES_H
#define GFP_SWEEP_HTML_SITES_H

#include "sweep.h"

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

void html_sites_build(struct hsites *hs);
void html_sites_free(struct hsites *hs);
/* fr's function, file:line, path and module into w. */
void html_sites_where(const struct frame *fr, struct where *w);
/* keep for html_chart_points: run i is one of a site's with outcome o. */
struct site_runs {
	const struct hsites *hs;
	size_t site;
	enum outcome o;
};
bool html_sites_run_at(size_t i, const void *ctx);

#endif
