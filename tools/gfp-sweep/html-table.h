/*
 * html-table.h - the page's table of findings and failure points
 * (html-table.c).
 */
#ifndef GFP_SWEEP_HTML_TABLE_H
#define GFP_SWEEP_HTML_TABLE_H

#include "html-sites.h"

void html_table(FILE *f, const struct hsites *hs, const struct finding *fs, size_t nfs);

#endif
