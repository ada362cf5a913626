/*
 * signals.c - the program's ways to set a fatal signal's action (sigaction,
 * signal and its kin) and to jump out of a handler (longjmp and its kin),
 * for crash.c: with GFP_RECORD the shim's handler stays first and chains to
 * the program's, which the program sets and reads back here as if it were
 * the kernel's. Any other signal, and every call without GFP_RECORD, goes
 * straight to libc's function of the same name.
 *
 * libc's signal() and its kin set the action through libc's internal
 * sigaction, which no preload reaches: each is done here, as glibc does it,
 * for the signals crash.c holds. siginterrupt is not: on a fatal signal it
 * changes nothing that matters.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>

#include "thread.h"
#include "crash.h"

#define EXPORT __attribute__((visibility("default")))

static void *next_symbol(const char *name)
{
	gfp_tls.guard++; /* dlsym allocates its error state */
	void *sym = dlsym(RTLD_NEXT, name);
	gfp_tls.guard--;
	return sym;
}

/* The next definition of name, found once (a lost race finds the same). */
#define NEXT(type, var, name)                                                                      \
	static type var;                                                                           \
	if (!__atomic_load_n(&var, __ATOMIC_ACQUIRE)) {                                            \
		void *sym_ = next_symbol(name);                                                    \
		type f_;                                                                           \
		__builtin_memcpy(&f_, &sym_, sizeof(f_));                                          \
		__atomic_store_n(&var, f_, __ATOMIC_RELEASE);                                      \
	}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return crash_sigaction(sig, act, old);
}

EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return crash_sigaction(sig, act, old);
}

/* ------------------------------------------------------------------------
 * signal() and its kin, for the signals crash.c holds
 * ---------------------------------------------------------------------- */

typedef void (*handler_t)(int);
typedef handler_t (*signal_fn)(int, handler_t);

/* glibc's __bsd_signal and __sysv_signal: the action from flags, the
 * handler's own signal blocked unless SA_NODEFER. */
static handler_t set_handler(int sig, handler_t h, int flags)
{
	if (h == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	struct sigaction sa, old;
	sa.sa_handler = h;
	sigemptyset(&sa.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&sa.sa_mask, sig);
	sa.sa_flags = flags;
	if (crash_sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* signal() and its kin: libc's own for a signal crash.c does not hold. */
#define SIGNAL_LIKE(name, flags)                                                                   \
	EXPORT handler_t name(int sig, handler_t h)                                                \
	{                                                                                          \
		if (crash_holds(sig))                                                              \
			return set_handler(sig, h, flags);                                         \
		NEXT(signal_fn, next, #name);                                                      \
		return next(sig, h);                                                               \
	}

/* BSD semantics: the handler stays, interrupted calls restart. */
SIGNAL_LIKE(signal, SA_RESTART)
SIGNAL_LIKE(bsd_signal, SA_RESTART)
SIGNAL_LIKE(ssignal, SA_RESTART)

/* System V semantics: once, not blocked, not restarted (glibc adds the
 * historical SA_INTERRUPT, which a kernel may keep). */
#ifdef SA_INTERRUPT
#define SYSV_FLAGS (SA_RESETHAND | SA_NODEFER | SA_INTERRUPT)
#else
#define SYSV_FLAGS (SA_RESETHAND | SA_NODEFER)
#endif
SIGNAL_LIKE(sysv_signal, SYSV_FLAGS)
SIGNAL_LIKE(__sysv_signal, SYSV_FLAGS)

EXPORT int sigignore(int sig)
{
	if (!crash_holds(sig)) {
		typedef int (*ignore_fn)(int);
		NEXT(ignore_fn, next, "sigignore");
		return next(sig);
	}
	struct sigaction sa;
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	return crash_sigaction(sig, &sa, NULL);
}

/* glibc's sigset: SIG_HOLD blocks the signal, anything else sets it with
 * no flags and unblocks it; SIG_HOLD is returned if it was blocked. */
EXPORT handler_t sigset(int sig, handler_t disp)
{
	if (!crash_holds(sig)) {
		NEXT(signal_fn, next, "sigset");
		return next(sig, disp);
	}
	sigset_t one, was;
	sigemptyset(&one);
	sigaddset(&one, sig);
	struct sigaction old;
	if (disp == SIG_HOLD) {
		if (crash_sigaction(sig, NULL, &old) < 0 || sigprocmask(SIG_BLOCK, &one, &was) < 0)
			return SIG_ERR;
		return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
	}
	struct sigaction sa;
	sa.sa_handler = disp;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	if (crash_sigaction(sig, &sa, &old) < 0 || sigprocmask(SIG_UNBLOCK, &one, &was) < 0)
		return SIG_ERR;
	return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
}

/* ------------------------------------------------------------------------
 * Jumps out of a handler. No <setjmp.h>: under _FORTIFY_SOURCE it renames
 * longjmp to __longjmp_chk.
 * ---------------------------------------------------------------------- */

typedef void (*jump_fn)(void *env, int val) __attribute__((noreturn));

enum { J_LONGJMP, J_LONGJMP_, J_SIGLONGJMP, J_LONGJMP_CHK, JUMPS };
static const char *const jump_names[JUMPS] = {"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"};
static jump_fn jumps[JUMPS];

static jump_fn next_jump(int i)
{
	jump_fn f = __atomic_load_n(&jumps[i], __ATOMIC_ACQUIRE);
	if (!f) {
		void *sym = next_symbol(jump_names[i]);
		__builtin_memcpy(&f, &sym, sizeof(f));
		__atomic_store_n(&jumps[i], f, __ATOMIC_RELEASE);
	}
	return f;
}

#define JUMP(name, i)                                                                              \
	EXPORT __attribute__((noreturn)) void name(void *env, int val);                            \
	EXPORT __attribute__((noreturn)) void name(void *env, int val)                             \
	{                                                                                          \
		crash_jumped();                                                                    \
		next_jump(i)(env, val);                                                            \
	}
JUMP(longjmp, J_LONGJMP)
JUMP(_longjmp, J_LONGJMP_)
JUMP(siglongjmp, J_SIGLONGJMP)
JUMP(__longjmp_chk, J_LONGJMP_CHK)

/* Found before main: a jump from a signal handler must not call dlsym. */
__attribute__((constructor(101))) static void signals_init(void)
{
	for (int i = 0; i < JUMPS; i++)
		next_jump(i);
}
