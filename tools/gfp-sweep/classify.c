/*
 * classify.c - what a run's end means: its exit, the shim's records (read
 * through record_reader.h), its output against the recording run's (a
 * silent run's loss is loss.c's), and a fault the program's own handler
 * caught.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "infile.h"
#include "launch.h"
#include "sweep.h"

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
		                 frames_module_index(mod, f.path, f.build_id));
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
bool classify_same_output(int idx, const struct output *rec_out)
{
	struct output out = run_read_output(idx);
	bool same = out.len == rec_out->len && memcmp(out.text, rec_out->text, out.len) == 0;
	free(out.text);
	return same;
}

/* Run idx's output against the recording run's: true if it differs, with
 * the evidence in r->ev; a silent run's loss and message in r->loss. */
static bool output_differs(struct run *r, int idx, const struct output *rec_out, bool silent)
{
	struct output out = run_read_output(idx);
	loss_evidence(rec_out, &out, &r->ev);
	silent |= r->ev.offset >= 0;
	if (silent) {
		loss_shape(rec_out, &out, &r->loss);
		loss_message(idx, &r->loss);
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

void classify_run(struct run *r, int idx, int st, bool timed_out, const struct output *rec_out)
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
	else if (r->status != sweep.rec_status && r->status != 0)
		r->outcome = O_HANDLED; /* it said so */
	else if (sweep.unstable)
		r->outcome = O_OK; /* silent losses are not looked for */
	else if (r->status != sweep.rec_status) {
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
