/*
 * html-sites.c - the call sites the page shows, once each: which runs
 * failed them, their outcomes, and where in the program each one is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "html-sites.h"

static const char *site_key(const struct run *r)
{
	return r->site[0] ? r->site : r->inj_site;
}

/* A frame's function for the table: its innermost (inlined) function,
 * else its symbol without the offset, else its module+offset. */
static void function_of(const struct frame *fr, char *out, size_t n)
{
	if (fr->func)
		snprintf(out, n, "%s", fr->func);
	else if (fr->sym[0])
		snprintf(out, n, "%.*s", (int)strcspn(fr->sym, "+"), fr->sym);
	else
		snprintf(out, n, "%s+%s", fr->mod, fr->off);
}

/* Function, file:line (the file's base name; path the whole) and module. */
static void frame_names(const struct frame *fr, struct where *w)
{
	snprintf(w->mod, sizeof(w->mod), "%s", fr->mod);
	function_of(fr, w->fn, sizeof(w->fn));
	w->file[0] = w->path[0] = '\0';
	if (fr->file) {
		const char *base = strrchr(fr->file, '/');
		snprintf(w->file, sizeof(w->file), "%s:%d", base ? base + 1 : fr->file, fr->line);
		snprintf(w->path, sizeof(w->path), "%s:%d", fr->file, fr->line);
	}
}

void html_sites_where(const struct frame *fr, struct where *w)
{
	frame_names(fr, w);
}

static void where_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct where *w = ctx;
	(void)line;
	(void)len;
	if (!fr || w->found)
		return;
	if (strcmp(fr->mod, frames_prog_base()) != 0) {
		/* The outermost library frame before the program's is what
		 * the program called: strdup, asprintf - by its recorded
		 * (exported) name rather than the source's (___asprintf). */
		if (fr->sym[0])
			snprintf(w->via, sizeof(w->via), "%.*s", (int)strcspn(fr->sym, "+"),
			         fr->sym);
		else if (fr->func)
			snprintf(w->via, sizeof(w->via), "%s", fr->func);
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
	for (size_t i = hs->s[s].first; i < sweep.nruns; i++)
		if (hs->of_run[i] == s && sweep.runs[i].inj_frames[0]) {
			frames_each(sweep.runs[i].inj_frames, false, where_frame, w);
			break;
		}
	/* Without a frame in the program there is no call into a library. */
	if (!w->found)
		w->via[0] = '\0';
}

void html_sites_build(struct hsites *hs)
{
	hs->s = calloc(sweep.nruns + 1, sizeof(*hs->s));
	hs->of_run = calloc(sweep.nruns + 1, sizeof(*hs->of_run));
	hs->n = 0;
	if (!hs->s || !hs->of_run)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < sweep.nruns; i++) {
		const struct run *r = &sweep.runs[i];
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

bool html_sites_run_at(size_t i, const void *ctx)
{
	const struct site_runs *p = ctx;
	return p->hs->of_run[i] == p->site && sweep.runs[i].outcome == p->o;
}

void html_sites_free(struct hsites *hs)
{
	free(hs->s);
	free(hs->of_run);
}
