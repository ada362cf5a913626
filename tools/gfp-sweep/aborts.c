/*
 * aborts.c - the distinct abort sites of a sweep: the runs the program
 * ended with abort() of its own (outcome abort) are no findings, but each
 * place that aborts is listed once, with which wrapper aborted for which
 * failed allocation, so that a user can check every one is deliberate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "sweep.h"

/* The same function: by name where both have one, else not. */
static bool same_function(const struct frame *a, const struct frame *b)
{
	return a->func && b->func && strcmp(a->mod, b->mod) == 0 && strcmp(a->func, b->func) == 0;
}

/* The failed allocation: the first injection frame outside the allocator
 * and outside the function that aborted (a wrapper such as xmalloc calls
 * malloc itself; its caller is the allocation that failed). */
struct find_alloc {
	const struct frame *aborter;
	struct frame *out;
	bool found;
};

static void alloc_of(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct find_alloc *a = ctx;
	(void)line, (void)len;
	if (!fr || a->found || allocator_module(fr->mod) ||
	    (a->aborter && same_function(fr, a->aborter)))
		return;
	*a->out = *fr;
	a->found = true;
}

static bool same_site(const struct abort_site *s, const struct run *r, const struct frame *alloc,
                      bool has_alloc)
{
	const struct run *first = &runs[s->first];
	return strcmp(first->crash_top, r->crash_top) == 0 && s->has_alloc == has_alloc &&
	       (!has_alloc ||
	        (strcmp(s->alloc.mod, alloc->mod) == 0 && strcmp(s->alloc.off, alloc->off) == 0));
}

size_t abort_sites(struct abort_site **out)
{
	struct abort_site *sites = NULL;
	size_t n = 0;
	for (size_t i = 0; i < nruns; i++) {
		const struct run *r = &runs[i];
		if (r->outcome != O_ABORT)
			continue;
		struct abort_site one = {.first = i, .count = 1};
		one.has_aborter = crash_top_frame(r, &one.aborter);
		struct find_alloc a = {one.has_aborter ? &one.aborter : NULL, &one.alloc, false};
		each_frame(r->inj_frames, false, alloc_of, &a);
		if (!a.found) { /* the aborting function is the first: itself */
			a.aborter = NULL;
			each_frame(r->inj_frames, false, alloc_of, &a);
		}
		one.has_alloc = a.found;
		size_t k = 0;
		while (k < n && !same_site(&sites[k], r, &one.alloc, one.has_alloc))
			k++;
		if (k < n) {
			sites[k].count++;
			continue;
		}
		sites = xrealloc(sites, (n + 1) * sizeof(*sites));
		sites[n++] = one;
	}
	*out = sites;
	return n;
}

void frame_words(FILE *f, const struct frame *fr)
{
	if (fr->func && fr->file && fr->line > 0) {
		const char *base = strrchr(fr->file, '/');
		fprintf(f, "%s %s:%d", fr->func, base ? base + 1 : fr->file, fr->line);
	} else if (fr->func || fr->sym[0])
		fprintf(f, "%s (%s+%s)", fr->func ? fr->func : fr->sym, fr->mod, fr->off);
	else
		fprintf(f, "%s+%s", fr->mod, fr->off);
}

void print_abort_sites(void)
{
	struct abort_site *sites;
	size_t n = abort_sites(&sites), runs_n = 0;
	for (size_t k = 0; k < n; k++)
		runs_n += sites[k].count;
	if (n)
		printf(
		    "\nabort sites: %zu (%zu run%s): the program aborted on purpose? check each\n",
		    n, runs_n, runs_n == 1 ? "" : "s");
	for (size_t k = 0; k < n; k++) {
		const struct abort_site *s = &sites[k];
		printf("  [A%zu] %zu run%s: ", k + 1, s->count, s->count == 1 ? "" : "s");
		if (s->has_aborter)
			frame_words(stdout, &s->aborter);
		else
			printf("%s", runs[s->first].crash_top[0] ? runs[s->first].crash_top : "-");
		printf(" aborted for the allocation of ");
		if (s->has_alloc)
			frame_words(stdout, &s->alloc);
		else
			printf("-");
		printf("\n    reproduce: ");
		reproducer(stdout, &runs[s->first]);
		printf("\n");
	}
	free(sites);
}

void abort_sites_json(FILE *f)
{
	struct abort_site *sites;
	size_t n = abort_sites(&sites);
	fprintf(f, "[");
	for (size_t k = 0; k < n; k++) {
		const struct abort_site *s = &sites[k];
		fprintf(f, "%s{\"count\":%zu,\"first_run\":%zu,\"crash_site\":", k ? "," : "",
		        s->count, s->first);
		text_json_str(f, runs[s->first].crash_top);
		fprintf(f, ",\"aborter\":");
		if (s->has_aborter)
			frame_json(f, s->aborter.info);
		else
			fprintf(f, "null");
		fprintf(f, ",\"allocation\":");
		if (s->has_alloc)
			frame_json(f, s->alloc.info);
		else
			fprintf(f, "null");
		struct membuf m;
		reproducer(mem_open(&m), &runs[s->first]);
		fclose(m.f);
		fprintf(f, ",\"reproducer\":");
		text_json_str(f, m.buf);
		free(m.buf);
		fprintf(f, "}");
	}
	fprintf(f, "]");
	free(sites);
}
