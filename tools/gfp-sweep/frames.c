/*
 * frames.c - frames as the reports show them: "symbol (module+offset)" lines
 * taken apart, with the program's own source lines from its debug
 * information (symbolize.c), looked up once per module+offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "symbolize.h"
#include "sweep.h"

char prog_path[PATH_MAX];

/* The program's module name as the records spell it. */
const char *prog_base(void)
{
	const char *base = strrchr(prog_path, '/');
	return base ? base + 1 : prog_path;
}

/* Source lines for the program's own frames, from its debug information,
 * with the chain of inlined functions: "make_title inventory.c:100 < main
 * inventory.c:480". Each module+offset is looked up once: the reports show
 * the same frames once per run. */
struct src_memo {
	char mod[128], off[32], src[600];
	bool return_address;
};
static struct src_memo *src_memo;
static size_t nsrc_memo, src_memo_cap;

static const char *source_cached(const char *mod, const char *off, bool return_address)
{
	for (size_t i = 0; i < nsrc_memo; i++)
		if (strcmp(src_memo[i].off, off) == 0 && strcmp(src_memo[i].mod, mod) == 0 &&
		    src_memo[i].return_address == return_address)
			return src_memo[i].src;
	if (nsrc_memo == src_memo_cap) {
		size_t cap = src_memo_cap ? src_memo_cap * 2 : 64;
		struct src_memo *m = realloc(src_memo, cap * sizeof(*m));
		if (!m)
			die(EXIT_USAGE, "out of memory");
		src_memo = m;
		src_memo_cap = cap;
	}
	struct src_memo *m = &src_memo[nsrc_memo++];
	snprintf(m->mod, sizeof(m->mod), "%s", mod);
	snprintf(m->off, sizeof(m->off), "%s", off);
	m->return_address = return_address;
	m->src[0] = '\0';
	char *end = NULL;
	errno = 0;
	unsigned long long o = strtoull(off, &end, 0);
	struct sym_module *sm = NULL;
	if (prog_path[0] && strcmp(mod, prog_base()) == 0 && end != off && !*end && errno == 0)
		sm = sym_open(prog_path, prog_base());
	size_t len = 0;
	if (sm)
		sym_chain(sm, o, return_address, m->src, sizeof(m->src), &len);
	return m->src;
}

static bool parse_frame(const char *line, size_t len, bool return_address, struct frame *fr)
{
	char buf[600];
	snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
	memset(fr, 0, sizeof(*fr));
	char *paren = strrchr(buf, '(');
	/* "(module+offset)": split at the last '+', module names have them
	 * (libstdc++.so.6). */
	char *close = paren ? strchr(paren, ')') : NULL;
	char *plus = close ? memrchr(paren, '+', (size_t)(close - paren)) : NULL;
	if (!plus || plus - paren - 1 >= (long)sizeof(fr->mod) ||
	    close - plus - 1 >= (long)sizeof(fr->off) || plus == paren + 1)
		return false;
	snprintf(fr->mod, sizeof(fr->mod), "%.*s", (int)(plus - paren - 1), paren + 1);
	snprintf(fr->off, sizeof(fr->off), "%.*s", (int)(close - plus - 1), plus + 1);
	while (paren > buf && paren[-1] == ' ')
		paren--;
	*paren = '\0';
	const char *sym = buf + strspn(buf, " ");
	snprintf(fr->sym, sizeof(fr->sym), "%s", sym);
	snprintf(fr->src, sizeof(fr->src), "%s", source_cached(fr->mod, fr->off, return_address));
	return true;
}

void each_frame(const char *frames, bool crash, frame_fn *fn, void *ctx)
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

void print_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	FILE *f = ctx;
	if (fr && fr->src[0])
		fprintf(f, "    %s (%s+%s)\n", fr->src, fr->mod, fr->off);
	else
		fprintf(f, "%.*s\n", (int)len, line);
}

struct top_ctx {
	const char *top; /* "module+offset symbol" */
	bool done;
};

static void top_frame(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct top_ctx *t = ctx;
	if (!fr || t->done)
		return;
	size_t ml = strlen(fr->mod), ol = strlen(fr->off);
	if (!strncmp(t->top, fr->mod, ml) && t->top[ml] == '+' &&
	    !strncmp(t->top + ml + 1, fr->off, ol) &&
	    (t->top[ml + 1 + ol] == ' ' || !t->top[ml + 1 + ol])) {
		print_frame(stdout, line, len, fr);
		t->done = true;
	}
}

/* A crash group's crash site, as its backtrace prints it (the faulting pc
 * when it is the top frame, else a return address looked up one byte back). */
void print_crash_top(const struct run *r)
{
	struct top_ctx t = {r->crash_top, false};
	each_frame(r->crash_frames, true, top_frame, &t);
	if (!t.done)
		printf("    %s\n", r->crash_top);
}

/* The frames as printed, with source lines where the program has them. */
void print_frames(const char *frames, bool crash)
{
	each_frame(frames, crash, print_frame, stdout);
}
