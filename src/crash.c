/*
 * crash.c - a record of every fatal signal (SEGV, BUS, ABRT, FPE, ILL), so
 * that a crash after an injected failure is tied to it in the records, even
 * when the program catches the signal itself.
 *
 * Installed only with GFP_RECORD. The shim's handler stays the one the
 * kernel calls for these signals; the program's own sigaction and signal
 * calls (preload/signals.c) land in a table here instead, and the handler
 * chains to what the program set with the program's semantics: its mask and
 * SA_NODEFER and SA_ONSTACK are the kernel's (the shim's action is installed
 * with them), SA_RESETHAND is done here (so that a handler that re-raises
 * still passes through the shim), SA_SIGINFO chooses the call, SIG_IGN is
 * the kernel's own (a fault the kernel then forces is the default), and
 * sigaction's old action is the program's as the kernel would return it.
 *
 * Records: "crash" when the signal takes its default action (the process
 * dies: the handler records, puts SIG_DFL back and lets the signal happen
 * again); "caught" when the program's handler is about to run, with the
 * frames where the signal hit; "caught_left" when that handler returned or
 * jumped out (siglongjmp, crash_jumped). A caught fault with no
 * caught_left is one the process died inside of: gfp-sweep calls that a
 * crash whatever the handler did next (abort, exit).
 *
 * It never allocates, and the handler only makes async-signal-safe calls.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>

#include "thread.h"
#include "unwind.h"
#include "records.h"
#include "crash.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
static bool active; /* crash_init ran: the table below is the program's view */
static sigaction_fn next_sigaction;

/* What the program set, as the kernel would give it back; written under
 * `writer` with every signal blocked, read by the handler as a seqlock
 * (odd: a write is under way). */
static struct program_action {
	unsigned seq; /* atomic */
	struct sigaction sa;
} program[NSIG];
static int writer; /* atomic: a spin lock, never held by an interrupted thread */

/* The program's handlers this thread is inside of (nested faults are
 * possible with SA_NODEFER), and which of them have a "caught" record. */
#define CRASH_NEST 32
static __thread struct {
	int depth;
	int signal[CRASH_NEST];
	uint32_t recorded;
} inside __attribute__((tls_model("initial-exec")));

/* "caught" records per process: a program that faults on purpose (a
 * garbage collector's barrier, a JIT's null check) pays for the first ones
 * only. */
#define CAUGHT_RECORDS 64
static unsigned caught_records; /* atomic */

static sigaction_fn resolve_next(void)
{
	sigaction_fn f = __atomic_load_n(&next_sigaction, __ATOMIC_ACQUIRE);
	if (f)
		return f;
	gfp_tls.guard++; /* dlsym allocates its error state */
	void *sym = dlsym(RTLD_NEXT, "sigaction");
	gfp_tls.guard--;
	__builtin_memcpy(&f, &sym, sizeof(f));
	__atomic_store_n(&next_sigaction, f, __ATOMIC_RELEASE);
	return f;
}

bool crash_holds(int sig)
{
	if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE))
		return false;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (fatal[i] == sig)
			return true;
	return false;
}

/* ------------------------------------------------------------------------
 * The program's actions
 * ---------------------------------------------------------------------- */

static void lock(void)
{
	while (__atomic_exchange_n(&writer, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock(void)
{
	__atomic_store_n(&writer, 0, __ATOMIC_RELEASE);
}

static void program_read(int sig, struct sigaction *out)
{
	for (;;) {
		unsigned s = __atomic_load_n(&program[sig].seq, __ATOMIC_ACQUIRE);
		if (s & 1) {
			sched_yield();
			continue;
		}
		memcpy(out, &program[sig].sa, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&program[sig].seq, __ATOMIC_RELAXED) == s)
			return;
	}
}

/* Under the lock. */
static void program_write(int sig, const struct sigaction *sa)
{
	__atomic_add_fetch(&program[sig].seq, 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(&program[sig].sa, sa, sizeof(*sa));
	__atomic_add_fetch(&program[sig].seq, 1, __ATOMIC_RELEASE);
}

static bool is_handler(const struct sigaction *sa)
{
	return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

static void on_fatal(int sig, siginfo_t *si, void *uc);

/* The kernel's action while the program's is `prog`: the shim's handler
 * with the program's mask and flags, but SA_RESETHAND (done in on_fatal);
 * SIG_IGN is the kernel's own. */
static void kernel_install(int sig, const struct sigaction *prog)
{
	if (prog->sa_handler == SIG_IGN) {
		next_sigaction(sig, prog, NULL);
		return;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	if (is_handler(prog)) {
		sa.sa_mask = prog->sa_mask;
		sa.sa_flags = prog->sa_flags & ~SA_RESETHAND;
	} else {
		sigemptyset(&sa.sa_mask);
	}
	sa.sa_flags |= SA_SIGINFO;
	next_sigaction(sig, &sa, NULL);
}

/* sigaction for the signals the shim holds; the rest go to libc's. */
int crash_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn next = resolve_next();
	if (!crash_holds(sig))
		return next(sig, act, old);
	struct sigaction want, prev, norm;
	if (act)
		want = *act; /* a bad pointer faults here, as in libc's */
	sigset_t all, saved;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	lock();
	program_read(sig, &prev);
	int r = 0;
	if (act) {
		/* The kernel's own reading of the action (flags it knows,
		 * SA_RESTORER, the mask without SIGKILL and SIGSTOP) is what
		 * a later sigaction returns: put it there for an instant. */
		r = next(sig, &want, NULL);
		if (r == 0 && next(sig, NULL, &norm) == 0) {
			program_write(sig, &norm);
			kernel_install(sig, &norm);
		}
	}
	int saved_errno = errno;
	unlock();
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	errno = saved_errno;
	if (r == 0 && old) {
		/* libc copies these and the kernel's part of the mask */
		old->sa_handler = prev.sa_handler;
		old->sa_flags = prev.sa_flags;
#ifdef SA_RESTORER
		old->sa_restorer = prev.sa_restorer;
#endif
		memcpy(&old->sa_mask, &prev.sa_mask, (NSIG - 1 + 7) / 8);
	}
	return r;
}

/* ------------------------------------------------------------------------
 * The handler
 * ---------------------------------------------------------------------- */

/* The frames of a record, off the stack: the handler may run on a small
 * alternate stack (a stack-overflow handler's). One thread at a time; the
 * others make do with a few frames on their stack. */
static struct gfp_frame frames_buf[32];
static int frames_busy; /* atomic */

/* What recording takes of the stack with the few frames: an alternate
 * stack with less room left gets no record (the handler still runs). */
#define RECORD_STACK 10240

static bool room_to_record(void)
{
	stack_t ss;
	if (sigaltstack(NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK))
		return true;
	char *sp = __builtin_frame_address(0);
	return sp > (char *)ss.ss_sp && (size_t)(sp - (char *)ss.ss_sp) > RECORD_STACK;
}

/* noinline: its buffers are off the stack before the program's handler
 * runs. */
static __attribute__((noinline)) bool record_signal(const char *event, int sig, siginfo_t *si)
{
	if (!room_to_record())
		return false;
	struct gfp_frame few[6], *frames = few;
	int max = sizeof(few) / sizeof(few[0]);
	bool own = !__atomic_exchange_n(&frames_busy, 1, __ATOMIC_ACQUIRE);
	if (own)
		frames = frames_buf, max = sizeof(frames_buf) / sizeof(frames_buf[0]);
	int n = unwind_capture_signal(frames, max);
	char extra[96];
	gfp_snprintf(extra, sizeof(extra), "\"signal\":%d,\"code\":%d,\"addr\":\"%p\"", sig,
	             si->si_code, si->si_addr);
	record_event(event, NULL, frames, n, extra);
	if (own)
		__atomic_store_n(&frames_busy, 0, __ATOMIC_RELEASE);
	return true;
}

static void record_left(int sig, const char *how)
{
	char extra[64];
	gfp_snprintf(extra, sizeof(extra), "\"signal\":%d,\"how\":\"%s\"", sig, how);
	record_short("caught_left", extra);
}

/* The default action: record, put it back and let it happen. */
static void die_by_default(int sig, siginfo_t *si)
{
	record_signal("crash", sig, si);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	next_sigaction(sig, &dfl, NULL);
	/* A fault repeats when the instruction runs again; a sent signal must
	 * be sent again (abort() does that itself, raising twice is harmless). */
	if (si->si_code <= 0)
		raise(sig);
}

/* The program's action now; with SA_RESETHAND this delivery takes it and
 * leaves SIG_DFL (handler only: the kernel keeps flags and mask), once
 * whichever thread gets there first. */
static void take_action(int sig, struct sigaction *sa)
{
	program_read(sig, sa);
	if (!is_handler(sa) || !(sa->sa_flags & SA_RESETHAND))
		return;
	lock();
	program_read(sig, sa);
	if (is_handler(sa) && (sa->sa_flags & SA_RESETHAND)) {
		struct sigaction reset = *sa;
		reset.sa_handler = SIG_DFL;
		program_write(sig, &reset);
	}
	unlock();
}

static void call_program(const struct sigaction *sa, int sig, siginfo_t *si, void *uc)
{
	/* A handler without SA_SIGINFO gets what the kernel passes it too:
	 * the same three registers (some programs read them). */
	void (*h)(int, siginfo_t *, void *);
	if (sa->sa_flags & SA_SIGINFO)
		h = sa->sa_sigaction;
	else
		__builtin_memcpy(&h, &sa->sa_handler, sizeof(h));
	h(sig, si, uc);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	gfp_tls.guard++;
	struct sigaction sa;
	take_action(sig, &sa);
	if (!is_handler(&sa)) {
		/* SIG_IGN here only in a race with the program's sigaction: a
		 * sent signal is then ignored, a fault the kernel would force. */
		if (sa.sa_handler == SIG_DFL || si->si_code > 0)
			die_by_default(sig, si);
		gfp_tls.guard--;
		errno = saved_errno;
		return;
	}
	int level = inside.depth;
	bool record = level < CRASH_NEST && records_on() &&
	              __atomic_add_fetch(&caught_records, 1, __ATOMIC_RELAXED) <= CAUGHT_RECORDS &&
	              record_signal("caught", sig, si);
	if (level < CRASH_NEST) {
		inside.signal[level] = sig;
		inside.recorded = (inside.recorded & ~(1u << level)) | (uint32_t)record << level;
	}
	inside.depth = level + 1;
	gfp_tls.guard--;
	errno = saved_errno;
	call_program(&sa, sig, si, uc);
	saved_errno = errno;
	inside.depth = level;
	if (level < CRASH_NEST && (inside.recorded & 1u << level)) {
		gfp_tls.guard++;
		record_left(sig, "return");
		gfp_tls.guard--;
	}
	errno = saved_errno;
}

void crash_jumped(void)
{
	if (__builtin_expect(inside.depth == 0, 1))
		return;
	int saved_errno = errno;
	gfp_tls.guard++;
	/* A jump from a handler leaves it, and every handler it interrupted. */
	while (inside.depth > 0) {
		int level = --inside.depth;
		if (level < CRASH_NEST && (inside.recorded & 1u << level))
			record_left(inside.signal[level], "longjmp");
	}
	gfp_tls.guard--;
	errno = saved_errno;
}

void crash_init(void)
{
	if (!resolve_next())
		return;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		int sig = fatal[i];
		struct sigaction cur;
		if (next_sigaction(sig, NULL, &cur) != 0)
			continue;
		/* What a library set before the shim was loaded is the
		 * program's. */
		program_write(sig, &cur);
		kernel_install(sig, &cur);
	}
	__atomic_store_n(&active, true, __ATOMIC_RELEASE);
}
