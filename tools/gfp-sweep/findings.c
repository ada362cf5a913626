/*
 * findings.c - one finding per bug: the runs of a sweep grouped by what went
 * wrong, not by which allocation failed.
 *
 * A crash is keyed by its state, as the fuzzing infrastructures that triage
 * crashes key theirs: its signal and the top three frames of its backtrace,
 * each by function (module+offset without a name), once the shim's,
 * jemalloc's and libunwind's frames, the signal trampoline and libc's abort
 * machinery are left out. libc's own frames count, so two libc crashes under
 * one program function are two findings; and when the three are all libc's,
 * the first program frame is added, so that a libc function two program bugs
 * call does not merge them. The sweep also knows the failed call: a frame of
 * the crash that is still the activation that made the failed call (the
 * function that called malloc, or an xmalloc-like wrapper whose failure
 * handler crashed) ends the state, since who called it does not change the
 * bug. A hang is keyed the same way by the stack it waited in (hang.c).
 * A silent run is keyed by the loss: its shape, the kind of line it lost
 * first and of the one in its place (their skeletons: words and numbers
 * alike), its exit status, and the message it wrote to stderr.
 *
 * Inside a finding, the distinct failed allocations (injection sites) that
 * lead to it are its call paths.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "demangle.h"
#include "tool.h"
#include "symbolize.h"
#include "sweep.h"

/* ------------------------------------------------------------------------
 * Frames as a state reads them
 * ---------------------------------------------------------------------- */

struct stack {
	struct frame *f;
	size_t n;
};

static void collect(void *ctx, const char *line, size_t len, const struct frame *fr)
{
	struct stack *s = ctx;
	(void)line, (void)len;
	if (!fr)
		return;
	s->f = xrealloc(s->f, (s->n + 1) * sizeof(*s->f));
	s->f[s->n++] = *fr;
}

static bool prefixed(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool libc_module(const char *mod)
{
	return prefixed(mod, "libc.so") || prefixed(mod, "ld-linux");
}

/* The tool's own modules: the shim, its allocator and its unwinder. */
static bool tool_module(const char *mod)
{
	return strcmp(mod, LIB_NAME) == 0 || prefixed(mod, "libjemalloc") ||
	       prefixed(mod, "libunwind");
}

/* A function's name without a symbol's "+0x..." or the suffix gcc gives a
 * clone (".constprop.0", ".isra.0", ".part.0", ".cold", " [clone ...]" as
 * a demangler writes it): one function, however it was compiled. */
static size_t base_len(const char *name)
{
	static const char *const clones[] = {".constprop.", ".isra.",     ".part.",
	                                     ".cold",       ".lto_priv.", " [clone "};
	const char *plus = strstr(name, "+0x");
	size_t n = plus ? (size_t)(plus - name) : strlen(name);
	for (size_t i = 0; i < sizeof(clones) / sizeof(clones[0]); i++) {
		const char *c = strstr(name, clones[i]);
		if (c && c > name && (size_t)(c - name) < n)
			n = (size_t)(c - name);
	}
	return n;
}

/* The name fr's code has, innermost (an inlined function by its own name),
 * or its physical function (the outermost of an inlined chain); NULL when
 * neither the debug information nor a symbol names it. */
static const char *innermost_name(const struct frame *fr)
{
	return fr->func ? fr->func : fr->sym[0] ? fr->sym : NULL;
}

static const char *physical_name(const struct frame *fr)
{
	if (fr->ninlined && fr->inlined[fr->ninlined - 1].function)
		return fr->inlined[fr->ninlined - 1].function;
	return innermost_name(fr);
}

/* libc's way to a signal it raises itself (abort, a failed check, an
 * assert) and the signal trampoline: how a crash was delivered, not where. */
static bool delivery_frame(const struct frame *fr)
{
	static const char *const names[] = {
	    "abort",
	    "raise",
	    "__GI_raise",
	    "__GI_abort",
	    "pthread_kill",
	    "__pthread_kill",
	    "__pthread_kill_implementation",
	    "__pthread_kill_internal",
	    "tgkill",
	    "__libc_message",
	    "__libc_message_impl",
	    "__libc_fatal",
	    "malloc_printerr",
	    "__malloc_assert",
	    "__fortify_fail",
	    "__chk_fail",
	    "__stack_chk_fail",
	    "__assert_fail",
	    "__assert_fail_base",
	    "__assert_perror_fail",
	    "__restore_rt",
	};
	const char *name = physical_name(fr);
	if (!name || !libc_module(fr->mod))
		return false;
	size_t n = base_len(name);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && strncmp(name, names[i], n) == 0)
			return true;
	return false;
}

/* The frames the state is made of: delivery frames and the tool's left
 * out, but a crash inside the allocator keeps the allocator's entry point
 * the program called (free, realloc) in their place. */
static void normalise(struct stack *s, bool crash)
{
	size_t k = 0, lead = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!delivery_frame(&s->f[i]))
			s->f[k++] = s->f[i];
	s->n = k;
	while (crash && lead < s->n && tool_module(s->f[lead].mod))
		lead++;
	k = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!tool_module(s->f[i].mod) || (lead && i == lead - 1))
			s->f[k++] = s->f[i];
	s->n = k;
}

static bool same_place(const struct frame *a, const struct frame *b)
{
	return strcmp(a->mod, b->mod) == 0 && strcmp(a->off, b->off) == 0;
}

static bool same_function(const struct frame *a, const struct frame *b)
{
	const char *x = physical_name(a), *y = physical_name(b);
	return x && y && strcmp(a->mod, b->mod) == 0 && base_len(x) == base_len(y) &&
	       strncmp(x, y, base_len(x)) == 0;
}

/* The innermost frame of the crash that is still an activation the failed
 * call was made in: below the frames both backtraces share (the same
 * return addresses, outermost first), the next one in when it is the same
 * function on both - the allocation's caller or its wrapper, left at another
 * instruction - else the innermost shared one. false when they share none;
 * *c and *i its index in each. */
static bool anchor(const struct stack *crash, const struct stack *inj, size_t *c, size_t *i)
{
	size_t k = 0;
	while (k < crash->n && k < inj->n &&
	       same_place(&crash->f[crash->n - 1 - k], &inj->f[inj->n - 1 - k]))
		k++;
	if (k < crash->n && k < inj->n &&
	    same_function(&crash->f[crash->n - 1 - k], &inj->f[inj->n - 1 - k]))
		k++;
	*c = crash->n - k;
	*i = inj->n - k;
	return k > 0;
}

/* One name of the state: a frame's function, else its module+offset; the
 * allocator's entry point without a name by its module alone (where inside
 * jemalloc a bad pointer faults depends on what the pointer held). */
static void add_name(struct state *st, const struct frame *fr, const char *name)
{
	if (st->n == STATE_FRAMES)
		return;
	char *out = st->name[st->n];
	if (name)
		snprintf(out, sizeof(st->name[0]), "%.*s", (int)base_len(name), name);
	else if (tool_module(fr->mod))
		snprintf(out, sizeof(st->name[0]), "%s", fr->mod);
	else
		snprintf(out, sizeof(st->name[0]), "%s+%s", fr->mod, fr->off);
	st->prog[st->n] = !libc_module(fr->mod) && !tool_module(fr->mod);
	st->frame[st->n++] = *fr;
}

/* A physical frame's names, innermost first: each inlined function, then
 * the one it was inlined into; libc's inlined helpers are one frame, its
 * exported function's. */
static size_t frame_names(const struct frame *fr, const char **names, size_t max)
{
	size_t n = 0;
	if (libc_module(fr->mod) || !fr->func) {
		names[n++] = physical_name(fr);
		return n;
	}
	names[n++] = fr->func;
	for (size_t i = 0; i < fr->ninlined && n < max; i++)
		if (fr->inlined[i].function)
			names[n++] = fr->inlined[i].function;
	return n;
}

/* A function of a backtrace, an inlined one too: its name (NULL: none) and
 * its physical frame. */
struct lname {
	const struct frame *fr;
	const char *name;
};

static bool same_name(const char *a, const char *b)
{
	return a && b && base_len(a) == base_len(b) && strncmp(a, b, base_len(a)) == 0;
}

bool run_state(const struct run *r, struct state *st)
{
	memset(st, 0, sizeof(*st));
	if (!r->crash_frames[0] || (r->outcome != O_CRASH && r->outcome != O_HANG))
		return false;
	struct stack crash = {NULL, 0}, inj = {NULL, 0};
	each_frame(r->crash_frames, true, collect, &crash);
	each_frame(r->inj_frames, false, collect, &inj);
	normalise(&crash, true);
	normalise(&inj, false);
	/* The crash's functions, innermost first; where each frame's start. */
	struct lname *l = xrealloc(NULL, (16 * crash.n + 1) * sizeof(*l));
	size_t *at = xrealloc(NULL, (crash.n + 1) * sizeof(*at)), nl = 0;
	for (size_t i = 0; i < crash.n; i++) {
		const char *names[16];
		at[i] = nl;
		size_t n = frame_names(&crash.f[i], names, 16);
		for (size_t k = 0; k < n; k++)
			l[nl++] = (struct lname){&crash.f[i], names[k]};
	}
	/* The activation that made the failed call, among the functions of
	 * its frame: those both backtraces have there, from the outermost in. */
	size_t ca, ia;
	long la = -1;
	if (anchor(&crash, &inj, &ca, &ia) && ca < crash.n) {
		const char *in[16];
		size_t ni = frame_names(&inj.f[ia], in, 16),
		       nc = (ca + 1 < crash.n ? at[ca + 1] : nl) - at[ca], k = 0;
		while (k + 1 < nc && k + 1 < ni &&
		       same_name(l[at[ca] + nc - 2 - k].name, in[ni - 2 - k]))
			k++;
		la = (long)(at[ca] + nc - 1 - k);
	}
	/* What the failure led to after that activation: the frames above it,
	 * else the activation itself, which crashed in its own code. */
	size_t upto = la > 0 ? (size_t)la : la == 0 ? 1 : nl;
	for (size_t i = 0; i < upto && st->n < 3; i++)
		add_name(st, l[i].fr, l[i].name);
	bool any_prog = false;
	for (size_t i = 0; i < st->n; i++)
		any_prog |= st->prog[i];
	/* libc's frames alone would make one finding of every bug that
	 * passed it a NULL: the first of the program's follows them. */
	for (size_t i = 3; !any_prog && i < nl && (la < 0 || i <= (size_t)la); i++)
		if (!libc_module(l[i].fr->mod) && !tool_module(l[i].fr->mod)) {
			add_name(st, l[i].fr, l[i].name);
			any_prog = true;
		}
	for (size_t i = st->n; !any_prog && la >= 0 && i <= (size_t)la; i++)
		if (!libc_module(l[i].fr->mod) && !tool_module(l[i].fr->mod)) {
			add_name(st, l[i].fr, l[i].name);
			any_prog = true;
		}
	st->cut = la >= 0;
	free(l);
	free(at);
	free(crash.f);
	free(inj.f);
	return st->n > 0;
}

/* ------------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------- */

/* s with each run of digits as "#" and each run of blanks as one space,
 * trimmed: a count or a column's width that depends on where the failure
 * came does not make another loss. */
void alike_text(char *out, size_t n, const char *s)
{
	size_t len = 0;
	for (const char *p = s; *p && len + 2 < n;) {
		if (*p >= '0' && *p <= '9') {
			out[len++] = '#';
			p += strspn(p, "0123456789");
		} else if (*p == ' ' || *p == '\t') {
			if (len && p[strspn(p, " \t")])
				out[len++] = ' ';
			p += strspn(p, " \t");
		} else
			out[len++] = *p++;
	}
	out[len] = '\0';
}

static bool word_byte(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_' || c >= 0x80;
}

/* A line's skeleton: each word - a run of letters, digits, '_' and UTF-8
 * characters, joined by "-", ".", "'" or "/" - as "w", each run of blanks
 * as one space, the punctuation kept. Lines of one kind - a table's rows,
 * one message about other files - have one skeleton: which of them a
 * failure lost depends on when it came, not on what went wrong. */
static void skeleton(char *out, size_t n, const char *s)
{
	size_t len = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && len + 2 < n;) {
		bool word = false;
		while (word_byte(*p) || (word && strchr("-.'/", *p) && *p && word_byte(p[1])))
			p++, word = true;
		if (word) {
			out[len++] = 'w';
			continue;
		}
		if (*p == ' ' || *p == '\t') {
			p += strspn((const char *)p, " \t");
			if (len && *p)
				out[len++] = ' ';
			continue;
		}
		out[len++] = (char)*p++;
	}
	out[len] = '\0';
}

/* "SIGSEGV": the signal of a crash, a caught fault's where there was one. */
void crash_signal(const struct run *r, char *out, size_t n)
{
	int sig = r->fault ? r->fault : r->signal;
	const char *abbrev = sig > 0 && sig < NSIG ? sigabbrev_np(sig) : NULL;
	if (abbrev)
		snprintf(out, n, "SIG%s", abbrev);
	else if (sig)
		snprintf(out, n, "signal %d", sig);
	else
		snprintf(out, n, "exit %d", r->status);
}

void state_text(FILE *f, const struct state *st, bool shown)
{
	for (size_t i = 0; i < st->n; i++) {
		char name[DEMANGLE_SHORT_LONGEST + 8];
		size_t len = 0;
		name[0] = '\0';
		/* the key keeps whole names; people read them as the console cuts them */
		if (shown)
			demangle_short(st->name[i], name, sizeof(name), &len);
		fprintf(f, "%s%s", i ? " < " : "", shown ? name : st->name[i]);
	}
}

/* The silent key: "silent: SHAPE" with the skeletons of the first line lost
 * and of the one in its place, the exit status where it is not the plain
 * run's, the message with its numbers made alike. */
static void loss_key(FILE *f, const struct run *r, bool display)
{
	const struct loss *l = &r->loss;
	char a[200], b[200];
	fprintf(f, "silent");
	if (l->message[0])
		fprintf(f, ", with a message");
	if (r->status != opt.rec_status)
		fprintf(f, " (exit %d where the plain run exited %d)", r->status, opt.rec_status);
	fprintf(f, ": %s", l->shape[0] ? l->shape : "output differs");
	/* What ends early or is missing whole depends on when the failure
	 * came: the shape alone is the loss. */
	bool lines = strcmp(l->shape, "lines lost") == 0 ||
	             strcmp(l->shape, "lines changed") == 0 || strcmp(l->shape, "lines added") == 0;
	if (lines && l->missing[0]) {
		skeleton(a, sizeof(a), l->missing);
		fprintf(f, ", \"%s\"", display ? l->missing : a);
	}
	if (lines && l->added[0]) {
		skeleton(b, sizeof(b), l->added);
		fprintf(f, "%s \"%s\"", l->missing[0] ? " became" : ",", display ? l->added : b);
	}
	if (l->message[0]) {
		alike_text(a, sizeof(a), l->message);
		fprintf(f, "; stderr: \"%s\"", display ? l->message : a);
	}
}

/* The caller of the failed allocation as words, "" without one. */
static void caller_words(FILE *f, const struct run *r)
{
	struct caller c;
	if (run_caller(r, &c))
		frame_words(f, &c.fr);
	else
		fputs(r->inj_site[0] ? r->inj_site : "-", f);
}

static void key_of(FILE *f, const struct run *r, bool display)
{
	struct state st;
	char sig[32];
	switch (r->outcome) {
	case O_SILENT:
		loss_key(f, r, display);
		return;
	case O_CRASH:
	case O_HANG:
		fputs(outcome_name[r->outcome], f);
		if (r->outcome == O_CRASH) {
			crash_signal(r, sig, sizeof(sig));
			fprintf(f, " %s", sig);
		}
		if (run_state(r, &st)) {
			fprintf(f, " in ");
			state_text(f, &st, display);
			return;
		}
		/* No backtrace to tell bugs apart by: one finding per failed
		 * allocation, as little merged as can be. */
		fprintf(f, ", no backtrace, after the failure in ");
		caller_words(f, r);
		fprintf(f, " (site %s)", r->inj_site[0] ? r->inj_site : "-");
		return;
	default:
		fputs(outcome_name[r->outcome], f);
	}
}

void finding_key(const struct run *r, char *out, size_t n)
{
	struct membuf m;
	key_of(mem_open(&m), r, false);
	fclose(m.f);
	snprintf(out, n, "%s", m.buf);
	free(m.buf);
}

void finding_title(FILE *f, const struct run *r)
{
	key_of(f, r, true);
}

/* ------------------------------------------------------------------------
 * Findings and their call paths
 * ---------------------------------------------------------------------- */

size_t find_findings(struct finding *fs, size_t *counts)
{
	size_t n = 0;
	char key[sizeof(fs->key)];
	for (size_t i = 0; i < nruns; i++) {
		struct run *r = &runs[i];
		counts[r->outcome]++;
		r->finding = -1;
		if (!is_finding(r->outcome))
			continue;
		finding_key(r, key, sizeof(key));
		size_t f = 0;
		while (f < n &&
		       (runs[fs[f].first].outcome != r->outcome || strcmp(fs[f].key, key) != 0))
			f++;
		if (f == n) {
			fs[n] = (struct finding){.first = i};
			snprintf(fs[n++].key, sizeof(fs->key), "%s", key);
		}
		fs[f].count++;
		r->finding = (long)f;
	}
	for (size_t f = 0; f < n; f++) {
		struct path *p;
		fs[f].paths = finding_paths(f, &p);
		free(p);
	}
	return n;
}

size_t group_runs(struct finding *fs, size_t *counts)
{
	size_t n = find_findings(fs, counts);
	/* Their files' indexes follow every planned run's. */
	for (size_t f = 0; f < n && !stop_requested(); f++) {
		progress_phase("confirming finding %zu of %zu", f + 1, n);
		fs[f].confirmed = confirm(&runs[fs[f].first], (int)(opt.runs_planned + 1 + f));
		fs[f].rerun = !stop_requested();
	}
	progress_clear();
	return n;
}

/* The site a run failed: the injection record's, else the one planned. */
static const char *path_site(const struct run *r)
{
	return r->inj_site[0] ? r->inj_site : r->site;
}

size_t finding_paths(size_t f, struct path **out)
{
	struct path *p = NULL;
	size_t n = 0;
	for (size_t i = 0; i < nruns; i++) {
		if (runs[i].finding != (long)f)
			continue;
		size_t k = 0;
		while (k < n && strcmp(path_site(&runs[p[k].first]), path_site(&runs[i])) != 0)
			k++;
		if (k == n) {
			p = xrealloc(p, (n + 1) * sizeof(*p));
			p[n++] = (struct path){.first = i};
		}
		p[k].count++;
	}
	*out = p;
	return n;
}

bool run_in_path(size_t i, const void *ctx)
{
	const struct run *first = &runs[((const struct path *)ctx)->first];
	return runs[i].finding == first->finding &&
	       strcmp(path_site(&runs[i]), path_site(first)) == 0;
}
