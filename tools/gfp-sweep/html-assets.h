/*
 * html-assets.h - the page's style sheet and script (html-assets.c).
 */
#ifndef GFP_SWEEP_HTML_ASSETS_H
#define GFP_SWEEP_HTML_ASSETS_H

extern const char html_style[], html_script[];

#endif
