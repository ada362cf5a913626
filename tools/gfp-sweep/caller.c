/*
 * caller.c - the failed allocation's caller: the first frame of the
 * injection record outside the allocator and libc (the frame that called
 * malloc, strdup, operator new), with its function, file and line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "sweep.h"

/* The allocator and libc: the frames between the program's call and the
 * shim, whichever function of them the program called. */
bool caller_allocator(const char *mod)
{
	static const char *const prefixes[] = {"libc.so", "ld-linux", "libjemalloc", "libstdc++"};
	if (strcmp(mod, LIB_NAME) == 0)
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(mod, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* The innermost function of a source chain, "make_title inventory.c:98 <
 * main inventory.c:472", taken apart. */
static void innermost(struct caller *c)
{
	const char *src = c->fr.src, *lt = strstr(src, " < ");
	size_t n = lt ? (size_t)(lt - src) : strlen(src);
	const char *colon = memrchr(src, ':', n),
	           *sp = colon ? memrchr(src, ' ', (size_t)(colon - src)) : NULL;
	char *end;
	long line = colon ? strtol(colon + 1, &end, 10) : 0;
	if (!sp || line <= 0 || end != src + n)
		return;
	snprintf(c->func, sizeof(c->func), "%.*s", (int)(sp - src), src);
	snprintf(c->file, sizeof(c->file), "%.*s", (int)(colon - sp - 1), sp + 1);
	c->line = line;
}

struct caller_ctx {
	struct caller *c;
	bool found;
};

static void caller_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct caller_ctx *k = ctx;
	(void)line, (void)len;
	if (!fr || k->found || caller_allocator(fr->mod))
		return;
	k->found = true;
	k->c->fr = *fr;
	/* The debug information's own function, file (its full path) and line;
	 * else what the printed source chain says. */
	if (fr->func && fr->file && fr->line > 0) {
		snprintf(k->c->func, sizeof(k->c->func), "%s", fr->func);
		snprintf(k->c->file, sizeof(k->c->file), "%s", fr->file);
		k->c->line = fr->line;
	} else
		innermost(k->c);
}

bool caller_of(const struct run *r, struct caller *c)
{
	memset(c, 0, sizeof(*c));
	struct caller_ctx k = {c, false};
	frames_each(r->inj_frames, false, caller_frame, &k);
	return k.found;
}
