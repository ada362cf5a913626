/*
 * frames.c - frames as the reports show them: frames_of's lines taken
 * apart, each module found and named by function and source line through
 * frame.c, every module+offset looked up once (the reports show the same
 * frames once per run).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "sweep.h"

/* The program's module name as the records spell it. */
const char *frames_prog_base(void)
{
	const char *base = strrchr(sweep.prog_path, '/');
	return base ? base + 1 : sweep.prog_path;
}

/* ------------------------------------------------------------------------
 * The modules the records named, by number: frames_of's lines are short
 * enough for struct run, the path and build-id are kept here once.
 * ---------------------------------------------------------------------- */

struct module {
	char *name, *path, *build_id;
};
static struct module *mods;
static size_t nmods;

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

size_t frames_module_index(const char *name, const char *path, const char *build_id)
{
	for (size_t i = 0; i < nmods; i++)
		if (same(mods[i].name, name) && same(mods[i].path, path) &&
		    same(mods[i].build_id, build_id))
			return i;
	mods = xrealloc(mods, (nmods + 1) * sizeof(*mods));
	mods[nmods] = (struct module){xstrdup(name), xstrdup(path), xstrdup(build_id)};
	return nmods++;
}

void frames_module_of(size_t n, const char **path, const char **build_id)
{
	*path = n < nmods ? mods[n].path : NULL;
	*build_id = n < nmods ? mods[n].build_id : NULL;
}

/* ------------------------------------------------------------------------
 * Each module+offset named once
 * ---------------------------------------------------------------------- */

struct named {
	size_t mod;
	char off[32], sym[200];
	bool return_address;
	struct frame_info fi;
};
static struct named **named;
static size_t nnamed;

static const struct frame_info *name_frame(size_t mod, const char *off, const char *sym,
                                           bool return_address)
{
	for (size_t i = 0; i < nnamed; i++)
		if (named[i]->mod == mod && named[i]->return_address == return_address &&
		    strcmp(named[i]->off, off) == 0 && strcmp(named[i]->sym, sym) == 0)
			return &named[i]->fi;
	if (nnamed == 0) /* modules not found by path or build-id: by name */
		frame_dirs_default(sweep.prog_path);
	named = xrealloc(named, (nnamed + 1) * sizeof(*named));
	struct named *n = named[nnamed++] = xrealloc(NULL, sizeof(**named));
	n->mod = mod;
	n->return_address = return_address;
	snprintf(n->off, sizeof(n->off), "%s", off);
	snprintf(n->sym, sizeof(n->sym), "%s", sym);
	const struct module *m = &mods[mod];
	struct rec_frame rf = {m->name, n->off, *n->sym ? n->sym : NULL, m->path, m->build_id};
	/* A record from before "modules": the program is the one swept. */
	if (!rf.path && sweep.prog_path[0] && strcmp(m->name, frames_prog_base()) == 0)
		rf.path = sweep.prog_path;
	frame_resolve(&rf, return_address, &n->fi);
	return &n->fi;
}

/* frames_of's line "MODULE\tOFFSET\tSYMBOL\tMODULE-NUMBER" into fr. */
static bool parse_frame(const char *line, size_t len, bool return_address, struct frame *fr)
{
	char buf[600];
	snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
	memset(fr, 0, sizeof(*fr));
	char *field[4], *p = buf;
	for (int i = 0; i < 4; i++) {
		field[i] = p;
		p += strcspn(p, "\t");
		if (i < 3 && !*p)
			return false;
		*p++ = '\0';
	}
	char *end = NULL;
	errno = 0;
	unsigned long long mod = strtoull(field[3], &end, 10);
	if (end == field[3] || *end || errno || mod >= nmods || !*field[0] || !*field[1])
		return false;
	snprintf(fr->mod, sizeof(fr->mod), "%s", field[0]);
	snprintf(fr->off, sizeof(fr->off), "%s", field[1]);
	snprintf(fr->sym, sizeof(fr->sym), "%s", field[2]);
	const struct frame_info *fi = name_frame((size_t)mod, fr->off, fr->sym, return_address);
	demangle_symbol(field[2], fr->sym, sizeof(fr->sym), &(size_t){0}); /* demangled */
	if (fi->located)
		snprintf(fr->src, sizeof(fr->src), "%.*s", (int)sizeof(fr->src) - 1, fi->desc);
	fr->path = fi->path;
	fr->build_id = fi->build_id;
	fr->func = fi->function[0] ? fi->function : NULL;
	fr->file = fi->located ? fi->loc.at.file : NULL;
	fr->line = fi->located ? fi->loc.at.line : 0;
	fr->inlined = fi->loc.inlined_into;
	fr->ninlined = fi->loc.ninlined;
	fr->info = fi;
	return true;
}

void frames_each(const char *frames, bool crash, frame_fn *fn, void *ctx)
{
	bool first = true;
	for (const char *line = frames; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		struct frame fr;
		bool is_frame = parse_frame(line, len, !(crash && first), &fr);
		first &= !is_frame;
		if (is_frame)
			fn(ctx, line, len, &fr);
		else
			fn(ctx, line, len, NULL);
		line = nl ? nl + 1 : line + len;
	}
}

void frames_print_line(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	FILE *f = ctx;
	if (fr)
		frame_print(f, fr->info);
	else
		fprintf(f, "%.*s\n", (int)len, line);
}

struct top_ctx {
	const char *top; /* "module+offset symbol" */
	struct frame *out;
	bool done;
};

/* fr is the crash site top (struct run's crash_top, "module+offset symbol"). */
static bool frame_is_top(const struct frame *fr, const char *top)
{
	size_t ml = strlen(fr->mod), ol = strlen(fr->off);
	return !strncmp(top, fr->mod, ml) && top[ml] == '+' &&
	       !strncmp(top + ml + 1, fr->off, ol) &&
	       (top[ml + 1 + ol] == ' ' || !top[ml + 1 + ol]);
}

static void top_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct top_ctx *t = ctx;
	(void)line, (void)len;
	if (!fr || t->done)
		return;
	if (frame_is_top(fr, t->top)) {
		*t->out = *fr;
		t->done = true;
	}
}

bool frames_crash_top(const struct run *r, struct frame *out)
{
	struct top_ctx t = {r->crash_top, out, false};
	if (r->crash_top[0])
		frames_each(r->crash_frames, true, top_frame, &t);
	return t.done;
}

/* The frames as printed, with source lines where the modules have them. */
void frames_print(const char *frames, bool crash)
{
	frames_each(frames, crash, frames_print_line, stdout);
}

struct json_ctx {
	FILE *f;
	size_t n;
};

static void json_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct json_ctx *j = ctx;
	(void)line;
	(void)len;
	if (!fr)
		return;
	if (j->n++)
		fputc(',', j->f);
	frame_json(j->f, fr->info);
}

void frames_json(FILE *f, const char *frames, bool crash)
{
	struct json_ctx j = {f, 0};
	fputc('[', f);
	frames_each(frames, crash, json_frame, &j);
	fputc(']', f);
}

void frames_words(FILE *f, const struct frame *fr)
{
	if (fr->func && fr->file && fr->line > 0) {
		const char *base = strrchr(fr->file, '/');
		fprintf(f, "%s %s:%d", fr->func, base ? base + 1 : fr->file, fr->line);
	} else if (fr->func || fr->sym[0])
		fprintf(f, "%s (%s+%s)", fr->func ? fr->func : fr->sym, fr->mod, fr->off);
	else if (fr->info && fr->info->has_start) /* a return address: its call's function */
		fprintf(f, "fn@%s+%#llx (%s+%s)", fr->mod, fr->info->start, fr->mod, fr->off);
	else
		fprintf(f, "%s+%s", fr->mod, fr->off);
}
