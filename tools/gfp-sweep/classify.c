/*
 * classify.c - what a run's end means: its exit, its output against the
 * recording run's, and the shim's records (read through records.h).
 */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "infile.h"
#include "launch.h"
#include "tool.h"
#include "record_reader.h"
#include "text.h"
#include "sweep.h"

const char *const outcome_name[O_COUNT] = {"ok",    "silent", "handled",  "abort",
                                           "crash", "hang",   "unreached"};

const char *const outcome_help[O_COUNT] = {
    [O_OK] = "the exit status and output of the plain run",
    [O_SILENT] = "the exit status of the plain run (or 0 where it failed) but other output: "
                 "data lost without an error; with a message when the run also wrote to "
                 "stderr a line the plain runs did not",
    [O_HANDLED] = "another non-zero exit status: the program said it failed",
    [O_ABORT] = "an abort the program chose, such as xmalloc's out of memory: no finding, "
                "but each place that aborts is listed once",
    [O_CRASH] = "a signal, an abort from a memory check, or a fault the program's own "
                "handler caught and never left before the run ended badly",
    [O_HANG] = "no end within the timeout; the stack it waited in is kept",
    [O_UNREACHED] = "the failure point was never reached",
};

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
 * control bytes, malformed UTF-8 and backslashes quoted (\xNN, \\), the
 * controls above as \uNNNN, and "..." where the line is cut. */
static void quote_line(char *out, size_t n, const char *s, size_t from, size_t to)
{
	const unsigned char *p = (const unsigned char *)s + from,
	                    *end = (const unsigned char *)s + to;
	size_t len = strlen(out);
	while (p < end) {
		char piece[12];
		size_t k = *p >= 0x80 ? text_utf8_len(p, end) : 1;
		unsigned cp = k > 1 ? text_hidden_control(p, k) : 0;
		if (cp)
			snprintf(piece, sizeof(piece), "\\u%04x", cp);
		else if (k > 1)
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

/* ------------------------------------------------------------------------
 * The loss: its shape, the first line lost and the one in its place
 * ---------------------------------------------------------------------- */

/* The lines of o as offsets: line k is [at[k], at[k + 1]), its newline
 * included; n lines (a last one without a newline counts). */
static size_t lines_of(const struct output *o, size_t **at)
{
	size_t n = 0, cap = 16;
	size_t *a = xrealloc(NULL, cap * sizeof(*a));
	for (size_t i = 0; i < o->len;) {
		const char *nl = memchr(o->text + i, '\n', o->len - i);
		size_t end = nl ? (size_t)(nl - o->text) + 1 : o->len;
		if (n + 2 > cap)
			a = xrealloc(a, (cap *= 2) * sizeof(*a));
		a[n++] = i;
		i = end;
	}
	a[n] = o->len;
	*at = a;
	return n;
}

static bool same_line(const struct output *x, const size_t *xa, size_t i, const struct output *y,
                      const size_t *ya, size_t j)
{
	size_t lx = xa[i + 1] - xa[i], ly = ya[j + 1] - ya[j];
	return lx == ly && memcmp(x->text + xa[i], y->text + ya[j], lx) == 0;
}

/* Line k of o from byte `from` on, quoted, its newline left out. */
static void quoted_line(char *out, size_t n, const struct output *o, size_t from)
{
	out[0] = '\0';
	const char *nl = memchr(o->text + from, '\n', o->len - from);
	quote_line(out, n, o->text, from, nl ? (size_t)(nl - o->text) : o->len);
}

/* How out lost data against exp: trimmed of the lines both start and end
 * with, what is left of exp is lost, of out added in its place. */
static void loss_shape(const struct output *exp, const struct output *out, struct loss *l)
{
	if (exp->len == out->len && memcmp(exp->text, out->text, out->len) == 0) {
		snprintf(l->shape, sizeof(l->shape), "same output");
		return;
	}
	/* A prefix cut inside a line ends early; one cut where a line starts
	 * lost the lines after it, as a line lost in the middle would. */
	if (!out->len || (out->len < exp->len && memcmp(exp->text, out->text, out->len) == 0 &&
	                  out->text[out->len - 1] != '\n')) {
		snprintf(l->shape, sizeof(l->shape), out->len ? "output ends early" : "no output");
		quoted_line(l->missing, sizeof(l->missing), exp, out->len);
		return;
	}
	size_t *ea, *oa;
	size_t ne = lines_of(exp, &ea), no = lines_of(out, &oa), p = 0, s = 0;
	while (p < ne && p < no && same_line(exp, ea, p, out, oa, p))
		p++;
	while (p + s < ne && p + s < no && same_line(exp, ea, ne - 1 - s, out, oa, no - 1 - s))
		s++;
	bool lost = p + s < ne, added = p + s < no;
	snprintf(l->shape, sizeof(l->shape), "%s",
	         lost && added ? "lines changed"
	         : lost        ? "lines lost"
	                       : "lines added");
	if (lost)
		quoted_line(l->missing, sizeof(l->missing), exp, ea[p]);
	if (added)
		quoted_line(l->added, sizeof(l->added), out, oa[p]);
	free(ea);
	free(oa);
}

/* ------------------------------------------------------------------------
 * The message: what a silent run wrote to stderr that the plain runs did not
 * ---------------------------------------------------------------------- */

#define MESSAGE_LINES 1000 /* of each stderr, the first looked at */

/* The lines of a run's stderr but the shim's own ("gfpshim: ...") and
 * blank ones, quoted (q), and with numbers made alike (a). */
struct err_lines {
	size_t n;
	char (*q)[200], (*a)[200];
};

static void err_lines(int idx, struct err_lines *e)
{
	char path[PATH_MAX + 16];
	size_t len = 0;
	run_paths(idx, "err", path, sizeof(path));
	char *err = infile_read(path, &len);
	for (size_t i = 0; err && i < len && e->n < MESSAGE_LINES;) {
		const char *nl = memchr(err + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - err) : len;
		if (end > i + strspn(err + i, " \t\r") && strncmp(err + i, "gfpshim: ", 9) != 0) {
			e->q = xrealloc(e->q, (e->n + 1) * sizeof(*e->q));
			e->a = xrealloc(e->a, (e->n + 1) * sizeof(*e->a));
			e->q[e->n][0] = '\0';
			quote_line(e->q[e->n], sizeof(e->q[0]), err, i, end);
			alike_text(e->a[e->n], sizeof(e->a[0]), e->q[e->n]);
			e->n++;
		}
		i = end + 1;
	}
	free(err);
}

/* The first line of run idx's stderr that neither plain run (0 and -1,
 * plan.c) wrote, numbers made alike: a clock in a warning is no message. */
static void stderr_message(int idx, struct loss *l)
{
	struct err_lines run = {0}, plain = {0};
	err_lines(idx, &run);
	if (run.n) {
		err_lines(0, &plain);
		err_lines(-1, &plain);
	}
	for (size_t i = 0; i < run.n && !l->message[0]; i++) {
		size_t k = 0;
		while (k < plain.n && strcmp(plain.a[k], run.a[i]) != 0)
			k++;
		if (k == plain.n)
			snprintf(l->message, sizeof(l->message), "%s", run.q[i]);
	}
	free(run.q), free(run.a), free(plain.q), free(plain.a);
}

/* Run idx's output against the recording run's: true if it differs, with
 * the evidence in r->ev; a silent run's loss and message in r->loss. */
static bool output_differs(struct run *r, int idx, const struct output *rec_out, bool silent)
{
	struct output out = read_output(idx);
	output_evidence(rec_out, &out, &r->ev);
	silent |= r->ev.offset >= 0;
	if (silent) {
		loss_shape(rec_out, &out, &r->loss);
		stderr_message(idx, &r->loss);
	}
	free(out.text);
	return r->ev.offset >= 0;
}

/* ------------------------------------------------------------------------
 * A fault the program's own handler caught
 * ---------------------------------------------------------------------- */

/* The shim's "caught" records (crash.c: the program's handler is about to
 * run) not followed by a "caught_left" of the same thread (it returned or
 * jumped out), in order: the handlers the process was still inside of when
 * it ended. */
#define OPEN_MAX 64
struct caught_scan {
	double pid; /* the process the failure was injected in: the others' faults are theirs */
	struct caught {
		double pid, tid, seq;
		int signal;
		bool fault; /* SEGV, BUS, FPE or ILL from the kernel: a fault */
	} open[OPEN_MAX];
	size_t nopen;
};

static double num(const struct jval *rec, const char *key)
{
	double v = 0;
	return json_num(rec, key, &v) ? v : 0;
}

static void scan_caught(void *ctx, const struct jval *rec)
{
	struct caught_scan *s = ctx;
	const char *ev = json_str(rec, "event");
	if (!ev)
		return;
	double pid = num(rec, "pid"), tid = num(rec, "tid");
	if (pid != s->pid)
		return;
	if (strcmp(ev, "caught") == 0 && s->nopen < OPEN_MAX) {
		int sig = (int)num(rec, "signal");
		s->open[s->nopen++] = (struct caught){
		    pid, tid, num(rec, "seq"), sig,
		    (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) &&
		        num(rec, "code") > 0};
	} else if (strcmp(ev, "caught_left") == 0) {
		/* the innermost handler of that thread */
		for (size_t i = s->nopen; i-- > 0;)
			if (s->open[i].pid == pid && s->open[i].tid == tid) {
				memmove(&s->open[i], &s->open[i + 1],
				        (s->nopen - i - 1) * sizeof(s->open[0]));
				s->nopen--;
				break;
			}
	}
}

struct fault_frames {
	double seq;
	struct run *r;
};

static void take_fault_frames(void *ctx, const struct jval *rec)
{
	struct fault_frames *f = ctx;
	const char *ev = json_str(rec, "event");
	if (ev && strcmp(ev, "caught") == 0 && num(rec, "seq") == f->seq)
		frames_of(rec, f->r->crash_frames, sizeof(f->r->crash_frames), f->r->crash_top,
		          sizeof(f->r->crash_top));
}

/* The first fault a program's handler caught and never left in the
 * process the failure was injected in (inj, its record), its frames the
 * crash's: the program chose how to die (abort, exit), not whether.
 * Returns its signal, 0 without one. */
static int unleft_fault(struct run *r, const char *text, size_t len, const struct jval *inj)
{
	struct caught_scan *s = calloc(1, sizeof(*s));
	if (!s)
		die(EXIT_USAGE, "out of memory");
	s->pid = num(inj, "pid");
	rec_each(text, len, scan_caught, s);
	int sig = 0;
	for (size_t i = 0; i < s->nopen && !sig; i++)
		if (s->open[i].fault) {
			struct fault_frames f = {s->open[i].seq, r};
			rec_each(text, len, take_fault_frames, &f);
			sig = s->open[i].signal;
		}
	free(s);
	return sig;
}

void classify(struct run *r, int idx, int st, bool timed_out, const struct output *rec_out)
{
	char path[PATH_MAX + 16];
	run_paths(idx, "rec", path, sizeof(path));
	size_t len = 0;
	char *text = infile_read(path, &len);
	struct jval inj_rec, crash_rec;
	r->ev.offset = -1;
	memset(&r->loss, 0, sizeof(r->loss));
	bool inj = text && rec_find(text, len, "injection", &inj_rec);
	bool crash = text && rec_find(text, len, "crash", &crash_rec);
	if (inj) {
		frames_of(&inj_rec, r->inj_frames, sizeof(r->inj_frames), NULL, 0);
		const char *site = json_str(&inj_rec, "site");
		if (site && strspn(site, "0123456789abcdef"))
			snprintf(r->inj_site, sizeof(r->inj_site), "%.*s",
			         (int)strspn(site, "0123456789abcdef"), site);
		const struct jval *startup = json_get(&inj_rec, "startup");
		r->startup = startup && startup->type == J_BOOL && startup->b;
	}
	if (crash)
		frames_of(&crash_rec, r->crash_frames, sizeof(r->crash_frames), r->crash_top,
		          sizeof(r->crash_top));
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	/* A fault caught and never left decides a run that did not end well;
	 * an exit 0 is the program's word that it recovered (a handler can be
	 * left in ways the shim does not see: setcontext, an exception). */
	r->fault = inj && !timed_out && (r->signal || r->status != 0) && text
	               ? unleft_fault(r, text, len, &inj_rec)
	               : 0;
	if (timed_out && inj)
		r->outcome = O_HANG;
	else if (!inj)
		r->outcome = O_UNREACHED; /* also a timeout before the failure point */
	else if (r->fault)
		r->outcome = O_CRASH;
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
		output_differs(r, idx, rec_out, true);
	} else
		r->outcome = output_differs(r, idx, rec_out, false) ? O_SILENT : O_OK;
	if (inj)
		json_free(&inj_rec);
	if (crash)
		json_free(&crash_rec);
	free(text);
}
