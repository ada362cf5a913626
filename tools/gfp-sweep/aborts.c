/*
 * aborts.c - the distinct abort sites of a sweep: the runs the program
 * ended with abort() of its own (outcome abort) are no findings, but each
 * place that aborts is listed once, with which wrapper aborted for which
 * failed allocation, so that a user can check every one is deliberate.
 */
#include <string.h>

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
	if (!fr || a->found || caller_allocator(fr->mod) ||
	    (a->aborter && same_function(fr, a->aborter)))
		return;
	*a->out = *fr;
	a->found = true;
}

static bool same_site(const struct abort_site *s, const struct run *r, const struct frame *alloc,
                      bool has_alloc)
{
	const struct run *first = &sweep.runs[s->first];
	return strcmp(first->crash_top, r->crash_top) == 0 && s->has_alloc == has_alloc &&
	       (!has_alloc ||
	        (strcmp(s->alloc.mod, alloc->mod) == 0 && strcmp(s->alloc.off, alloc->off) == 0));
}

size_t aborts_find(struct abort_site **out)
{
	struct abort_site *sites = NULL;
	size_t n = 0;
	for (size_t i = 0; i < sweep.nruns; i++) {
		const struct run *r = &sweep.runs[i];
		if (r->outcome != O_ABORT)
			continue;
		struct abort_site one = {.first = i, .count = 1};
		one.has_aborter = frames_crash_top(r, &one.aborter);
		struct find_alloc a = {one.has_aborter ? &one.aborter : NULL, &one.alloc, false};
		frames_each(r->inj_frames, false, alloc_of, &a);
		if (!a.found) { /* the aborting function is the first: itself */
			a.aborter = NULL;
			frames_each(r->inj_frames, false, alloc_of, &a);
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
