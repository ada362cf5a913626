/*
 * classify.c - what a run's end means: its exit, its output against the
 * recording run's, and the shim's records (read through records.h).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common.h"
#include "record_reader.h"
#include "text.h"
#include "sweep.h"

const char *const outcome_name[O_COUNT] = {"ok",    "silent", "handled",  "abort",
                                           "crash", "hang",   "unreached"};

/* s without the tabs and newlines that split frames_of's lines. */
static void field(char *out, size_t n, const char *s)
{
	snprintf(out, n, "%s", s ? s : "");
	for (char *p = out; *p; p++)
		if (*p == '\t' || *p == '\n')
			*p = ' ';
}

/* Frames of one record as lines "module\toffset\tsymbol\tN", N the
 * module's number in frames.c (its path and build-id); *top gets the first
 * frame outside libc and the shim, the crash site. The limits are those of
 * struct run's fields. */
static void frames_of(const struct jval *rec, char *out, size_t n, char *top, size_t topn)
{
	out[0] = '\0';
	if (top)
		top[0] = '\0';
	size_t len = 0;
	for (size_t i = 0; i < rec_nframes(rec); i++) {
		struct rec_frame f;
		rec_frame(rec, i, &f);
		char mod[128], off[32], sym[160];
		field(mod, sizeof(mod), f.module);
		field(off, sizeof(off), f.offset);
		field(sym, sizeof(sym), f.symbol);
		int w = snprintf(out + len, n - len, "%s\t%s\t%s\t%zu\n", mod, off, sym,
		                 module_index(mod, f.path, f.build_id));
		if (w > 0 && (size_t)w < n - len)
			len += (size_t)w;
		/* A site longer than struct run keeps is cut, not an error. */
		if (top && !top[0] && strcmp(mod, "libc.so.6") != 0 && strcmp(mod, LIB_NAME) != 0 &&
		    snprintf(top, topn, "%s+%s%s%s", mod, off, *sym ? " " : "", sym) >= (int)topn)
			top[topn - 1] = '\0';
	}
}

/* An abort the program chose (xmalloc's "out of memory") rather than one
 * raised by a check that found memory corrupt: a frame in jemalloc or in
 * glibc's checks. */
static bool crash_is_memory(const struct jval *crash)
{
	static const char *const markers[] = {"libjemalloc",     "__assert_fail",
	                                      "__fortify_fail",  "__stack_chk_fail",
	                                      "malloc_printerr", "__libc_message"};
	for (size_t i = 0; crash && i < rec_nframes(crash); i++) {
		struct rec_frame f;
		rec_frame(crash, i, &f);
		for (size_t m = 0; m < sizeof(markers) / sizeof(markers[0]); m++)
			if ((f.module && strstr(f.module, markers[m])) ||
			    (f.symbol && strstr(f.symbol, markers[m])))
				return true;
	}
	return false;
}

/* Run idx wrote what the recording run wrote: byte for byte, NULs too. */
bool same_output(int idx, const struct output *rec_out)
{
	struct output out = read_output(idx);
	bool same = out.len == rec_out->len && memcmp(out.text, rec_out->text, out.len) == 0;
	free(out.text);
	return same;
}

/* ------------------------------------------------------------------------
 * Evidence of a silent loss: where the outputs part
 * ---------------------------------------------------------------------- */

#define EV_BEFORE 40 /* bytes of a long line shown before the difference */

/* Appends s[from..to) to out[0..n) as one readable line: UTF-8 kept,
 * control bytes, malformed UTF-8 and backslashes quoted (\xNN, \\), and
 * "..." where the line is cut. */
static void quote_line(char *out, size_t n, const char *s, size_t from, size_t to)
{
	const unsigned char *p = (const unsigned char *)s + from,
	                    *end = (const unsigned char *)s + to;
	size_t len = strlen(out);
	while (p < end) {
		char piece[8];
		size_t k = *p >= 0x80 ? text_utf8_len(p, end) : 1;
		if (k > 1)
			memcpy(piece, p, k), piece[k] = '\0';
		else if (*p == '\\')
			snprintf(piece, sizeof(piece), "\\\\");
		else if (*p < 0x20 || *p >= 0x7f)
			snprintf(piece, sizeof(piece), "\\x%02x", *p);
		else
			piece[0] = (char)*p, piece[1] = '\0';
		size_t pl = strlen(piece);
		if (len + pl + 4 > n) { /* room for "..." and the NUL */
			memcpy(out + len, "...", 4);
			return;
		}
		memcpy(out + len, piece, pl + 1);
		len += pl;
		p += k ? k : 1;
	}
}

/* One side's line at the difference: from the line's start (or EV_BEFORE
 * bytes before the difference, on a character's start: both sides are the
 * same up to there) to its end, the newline left out. */
static void side_line(char *out, size_t n, const struct output *o, size_t start, size_t at)
{
	out[0] = '\0';
	if (start >= o->len) {
		snprintf(out, n, "(end of output)");
		return;
	}
	if (at - start > EV_BEFORE) {
		start = at - EV_BEFORE;
		while (start < at && ((unsigned char)o->text[start] & 0xc0) == 0x80)
			start++;
		snprintf(out, n, "...");
	}
	const char *nl = memchr(o->text + start, '\n', o->len - start);
	quote_line(out, n, o->text, start, nl ? (size_t)(nl - o->text) : o->len);
}

/* Where out first differs from exp; ev->offset -1 when they are the same. */
static void output_evidence(const struct output *exp, const struct output *out, struct evidence *ev)
{
	size_t n = exp->len < out->len ? exp->len : out->len, at = 0;
	while (at < n && exp->text[at] == out->text[at])
		at++;
	ev->offset = -1;
	if (at == n && exp->len == out->len)
		return;
	size_t start = 0;
	ev->line = 1;
	for (size_t i = 0; i < at; i++)
		if (exp->text[i] == '\n')
			ev->line++, start = i + 1;
	ev->offset = (long long)at;
	ev->column = (long)(at - start) + 1;
	ev->expected_bytes = (long long)exp->len;
	ev->actual_bytes = (long long)out->len;
	side_line(ev->expected, sizeof(ev->expected), exp, start, at);
	side_line(ev->actual, sizeof(ev->actual), out, start, at);
}

/* Run idx's output against the recording run's: true if it differs, with
 * the evidence in r->ev. */
static bool output_differs(struct run *r, int idx, const struct output *rec_out)
{
	struct output out = read_output(idx);
	output_evidence(rec_out, &out, &r->ev);
	free(out.text);
	return r->ev.offset >= 0;
}

void classify(struct run *r, int idx, int st, bool timed_out, const struct output *rec_out)
{
	char path[PATH_MAX + 16];
	run_paths(idx, "rec", path, sizeof(path));
	size_t len = 0;
	char *text = text_slurp(path, &len);
	struct jval inj_rec, crash_rec;
	r->ev.offset = -1;
	bool inj = text && rec_find(text, len, "injection", &inj_rec);
	bool crash = text && rec_find(text, len, "crash", &crash_rec);
	if (inj) {
		frames_of(&inj_rec, r->inj_frames, sizeof(r->inj_frames), NULL, 0);
		const char *site = json_str(&inj_rec, "site");
		if (site && strspn(site, "0123456789abcdef"))
			snprintf(r->inj_site, sizeof(r->inj_site), "%.*s",
			         (int)strspn(site, "0123456789abcdef"), site);
	}
	if (crash)
		frames_of(&crash_rec, r->crash_frames, sizeof(r->crash_frames), r->crash_top,
		          sizeof(r->crash_top));
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	if (timed_out && inj)
		r->outcome = O_HANG;
	else if (!inj)
		r->outcome = O_UNREACHED; /* also a timeout before the failure point */
	else if (r->signal == SIGABRT && !crash_is_memory(crash ? &crash_rec : NULL))
		r->outcome = O_ABORT;
	else if (r->signal)
		r->outcome = O_CRASH;
	else if (r->status != opt.rec_status && r->status != 0)
		r->outcome = O_HANDLED; /* it said so */
	else if (opt.unstable)
		r->outcome = O_OK; /* silent losses are not looked for */
	else if (r->status != opt.rec_status) {
		r->outcome = O_SILENT; /* success where the plain run failed */
		output_differs(r, idx, rec_out);
	} else
		r->outcome = output_differs(r, idx, rec_out) ? O_SILENT : O_OK;
	if (inj)
		json_free(&inj_rec);
	if (crash)
		json_free(&crash_rec);
	free(text);
}
