/*
 * state.c - a crash's or a hang's state: what the failure led to, as the
 * fuzzing infrastructures that triage crashes key theirs: its signal and
 * the top three frames of its backtrace, each by function (module+offset
 * without a name), once the shim's, jemalloc's and libunwind's frames, the
 * signal trampoline and libc's abort machinery are left out. libc's own
 * frames count, so two libc crashes under one program function are two
 * states; and when the three are all libc's, the first program frame is
 * added, so that a libc function two program bugs call does not merge them.
 * The sweep also knows the failed call: a frame of the crash that is still
 * the activation that made the failed call (the function that called
 * malloc, or an xmalloc-like wrapper whose failure handler crashed) ends
 * the state, since who called it does not change the bug. A hang's state is
 * read the same way from the stack it waited in (hang.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "launch.h"
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

static bool libc_module(const char *mod)
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

/* A frame without a name is its function by the start its module's CFI
 * gives (a stripped module's functions keep their FDEs). */
static bool fde_start(const struct frame *fr, unsigned long long *start)
{
	if (physical_name(fr) || !fr->info || !fr->info->has_start)
		return false;
	*start = fr->info->start;
	return true;
}

static bool same_function(const struct frame *a, const struct frame *b)
{
	const char *x = physical_name(a), *y = physical_name(b);
	unsigned long long sa, sb;
	if (fde_start(a, &sa) && fde_start(b, &sb))
		return strcmp(a->mod, b->mod) == 0 && sa == sb;
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

/* One name of the state: a frame's function; without a name, the function
 * its module's CFI says the frame is in, "fn@module+start" (two frames of
 * one function of a stripped module are one state, wherever in it they
 * were), else its module+offset; the allocator's entry point without a
 * name by its module alone (where inside jemalloc a bad pointer faults
 * depends on what the pointer held). */
static void add_name(struct state *st, const struct frame *fr, const char *name)
{
	if (st->n == STATE_FRAMES)
		return;
	char *out = st->name[st->n];
	unsigned long long start;
	if (name)
		snprintf(out, sizeof(st->name[0]), "%.*s", (int)base_len(name), name);
	else if (tool_module(fr->mod))
		snprintf(out, sizeof(st->name[0]), "%s", fr->mod);
	else if (fde_start(fr, &start))
		snprintf(out, sizeof(st->name[0]), "fn@%s+%#llx", fr->mod, start);
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

bool state_of(const struct run *r, struct state *st)
{
	memset(st, 0, sizeof(*st));
	if (!r->crash_frames[0] || (r->outcome != O_CRASH && r->outcome != O_HANG))
		return false;
	struct stack crash = {NULL, 0}, inj = {NULL, 0};
	frames_each(r->crash_frames, true, collect, &crash);
	frames_each(r->inj_frames, false, collect, &inj);
	/* A thread that hangs in the allocator waits for what its caller
	 * asked: the allocator's frames count for a crash only. */
	normalise(&crash, r->outcome == O_CRASH);
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
 * The state in words
 * ---------------------------------------------------------------------- */

void state_signal(const struct run *r, char *out, size_t n)
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
