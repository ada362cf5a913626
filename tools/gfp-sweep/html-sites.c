/*
 * html-sites.c - the call sites the page shows, once each: which runs
 * failed them, their outcomes, and where in the program each one is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "html.h"

const char *site_key(const struct run *r)
{
	return r->site[0] ? r->site : r->inj_site;
}

/* fn and file:line of a frame for the table: the innermost function of its
 * source chain ("make_title inventory.c:98 < main inventory.c:472"), else
 * its symbol without the offset, else its offset. */
static void frame_names(const struct frame *fr, struct where *w)
{
	snprintf(w->mod, sizeof(w->mod), "%s", fr->mod);
	w->file[0] = '\0';
	if (fr->src[0]) {
		int inner = (int)(strstr(fr->src, " < ") ? strstr(fr->src, " < ") - fr->src
		                                         : (long)strlen(fr->src));
		const char *sp = memrchr(fr->src, ' ', (size_t)inner);
		int fnl = sp ? (int)(sp - fr->src) : inner;
		snprintf(w->fn, sizeof(w->fn), "%.*s", fnl, fr->src);
		if (sp)
			snprintf(w->file, sizeof(w->file), "%.*s", inner - fnl - 1, sp + 1);
	} else if (fr->sym[0]) {
		snprintf(w->fn, sizeof(w->fn), "%.*s", (int)strcspn(fr->sym, "+"), fr->sym);
	} else {
		snprintf(w->fn, sizeof(w->fn), "%s", fr->off);
	}
}

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
			frame_names(fr, w);
		}
		return;
	}
	frame_names(fr, w);
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

/* A site's place comes from the first of its runs whose injection was
 * recorded; a site no run reached has none. */
static void site_where(struct hsites *hs, size_t s)
{
	struct where *w = &hs->s[s].w;
	memset(w, 0, sizeof(*w));
	for (size_t i = hs->s[s].first; i < nruns; i++)
		if (hs->of_run[i] == s && runs[i].inj_frames[0]) {
			each_frame(runs[i].inj_frames, false, where_frame, w);
			break;
		}
	/* Without a frame in the program there is no call into a library. */
	if (!w->found)
		w->via[0] = '\0';
}

void hsites_build(struct hsites *hs)
{
	hs->s = calloc(nruns + 1, sizeof(*hs->s));
	hs->of_run = calloc(nruns + 1, sizeof(*hs->of_run));
	hs->n = 0;
	if (!hs->s || !hs->of_run)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		const char *key = site_key(r);
		size_t s = 0;
		/* From the last site back: a site's runs are mostly adjacent. */
		for (s = hs->n; s-- > 0;)
			if (strcmp(hs->s[s].key, key) == 0)
				break;
		if (s == (size_t)-1) {
			s = hs->n++;
			hs->s[s].key = key;
			hs->s[s].first = i;
		}
		hs->of_run[i] = s;
		hs->s[s].n[r->outcome]++;
		hs->s[s].total++;
		hs->s[s].findings += is_finding(r->outcome);
	}
	for (size_t s = 0; s < hs->n; s++)
		site_where(hs, s);
}

void hsites_free(struct hsites *hs)
{
	free(hs->s);
	free(hs->of_run);
}
