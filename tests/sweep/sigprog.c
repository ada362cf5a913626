/*
 * sigprog - what a program sees of its own fatal-signal actions: every
 * action it sets through sigaction, signal, sysv_signal, sigset and
 * sigignore read back in full (handler, flags, the kernel's 64 signals of
 * the mask), and at delivery what is blocked, what sigaction says from
 * inside the handler (SA_RESETHAND), siginfo, and a siglongjmp out. One
 * line per fact on stdout: the same with and without the shim (signals.sh).
 *
 * sigprog altstack BYTES: faults with a handler on an alternate stack of
 * BYTES that does what python's faulthandler does (puts SIG_DFL back and
 * raises the signal again), so the process dies by SIGSEGV.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void h1(int sig)
{
	(void)sig;
}
static void h2(int sig)
{
	(void)sig;
}

static const char *name_of(void (*h)(int))
{
	return h == SIG_DFL ? "DFL" : h == SIG_IGN ? "IGN" : h == h1 ? "h1" : h == h2 ? "h2" : "?";
}

static void show_action(const char *what, int sig, const struct sigaction *sa)
{
	printf("%s %d: %s flags %#x mask", what, sig,
	       sa->sa_flags & SA_SIGINFO ? "siginfo" : name_of(sa->sa_handler),
	       (unsigned)sa->sa_flags);
	for (int s = 1; s <= 64; s++)
		if (sigismember(&sa->sa_mask, s) == 1)
			printf(" %d", s);
	printf("\n");
}

static void query(const char *what, int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	if (sigaction(sig, NULL, &sa) != 0)
		printf("%s %d: sigaction failed\n", what, sig);
	else
		show_action(what, sig, &sa);
}

static sigjmp_buf back;
static volatile int *volatile nowhere = (volatile int *)16;
static int deliveries;

static void blocked_now(const char *what, int sig)
{
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	printf("%s: in handler of %d, blocked:", what, sig);
	for (int s = 1; s <= 64; s++)
		if (sigismember(&cur, s) == 1)
			printf(" %d", s);
	printf("\n");
}

static void counting(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	deliveries++;
	blocked_now("counting", sig);
	printf("counting: code %d addr %p\n", si->si_code, si->si_addr);
	query("counting: action inside", sig);
	siglongjmp(back, 1);
}

static void oneshot(int sig)
{
	deliveries++;
	blocked_now("oneshot", sig);
	query("oneshot: action inside", sig);
}

static void set(int sig, void (*h)(int), void (*act)(int, siginfo_t *, void *), int flags,
                int masked)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	memset(&old, 0, sizeof(old));
	if (act)
		sa.sa_sigaction = act;
	else
		sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (masked)
		sigaddset(&sa.sa_mask, masked);
	sigaddset(&sa.sa_mask, SIGKILL); /* the kernel drops it */
	int r = sigaction(sig, &sa, &old);
	printf("set %d -> %d, ", sig, r);
	show_action("old", sig, &old);
}

static void reraise(int sig)
{
	signal(sig, SIG_DFL);
	raise(sig);
}

static int fault_on_altstack(size_t size)
{
	stack_t ss = {.ss_sp = malloc(size), .ss_size = size, .ss_flags = 0};
	if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
		return 2;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = reraise;
	sa.sa_flags = SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	*(volatile int *)(uintptr_t)0 = 1;
	return 3;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "altstack") == 0)
		return fault_on_altstack(strtoul(argv[2], NULL, 10));
	setvbuf(stdout, NULL, _IOLBF, 0);
	int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
	for (int i = 0; i < 5; i++)
		query("start", sigs[i]);

	set(SIGSEGV, h1, NULL, SA_NODEFER | SA_ONSTACK | SA_RESTART, SIGUSR1);
	query("after h1", SIGSEGV);
	printf("signal(SEGV, h2) returned %s\n", name_of(signal(SIGSEGV, h2)));
	query("after signal", SIGSEGV);
	printf("sysv_signal(SEGV, h1) returned %s\n", name_of(sysv_signal(SIGSEGV, h1)));
	query("after sysv_signal", SIGSEGV);
	set(SIGSEGV, SIG_IGN, NULL, 0, 0);
	query("after IGN", SIGSEGV);
	set(SIGSEGV, SIG_DFL, NULL, 0, 0);
	query("after DFL", SIGSEGV);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* what programs still call */
	printf("sigset(BUS, h2) returned %s\n", name_of(sigset(SIGBUS, h2)));
	query("after sigset", SIGBUS);
	printf("sigignore(FPE) returned %d\n", sigignore(SIGFPE));
#pragma GCC diagnostic pop
	query("after sigignore", SIGFPE);
	printf("signal(ABRT, h1) returned %s\n", name_of(signal(SIGABRT, h1)));
	query("after signal ABRT", SIGABRT);
	struct sigaction same, again;
	sigaction(SIGABRT, NULL, &same);
	printf("set to what it read: %d\n", sigaction(SIGABRT, &same, &again));
	show_action("what it read", SIGABRT, &again);
	printf("bad signal: %d\n", sigaction(0, NULL, &same));

	/* SA_RESETHAND with a mask: the handler runs once, SEGV blocked in
	 * it, SIGUSR2 too; from inside, the action reads SIG_DFL. */
	set(SIGSEGV, oneshot, NULL, SA_RESETHAND, SIGUSR2);
	raise(SIGSEGV);
	query("after oneshot", SIGSEGV);
	/* SA_NODEFER: not blocked in the handler. */
	set(SIGSEGV, oneshot, NULL, SA_NODEFER | SA_RESETHAND, 0);
	raise(SIGSEGV);
	/* A fault with SA_SIGINFO, twice: the handler stays, gets the code
	 * and the address, and jumps out. */
	set(SIGSEGV, NULL, counting, SA_SIGINFO, SIGUSR1);
	for (int i = 0; i < 2; i++)
		if (sigsetjmp(back, 1) == 0)
			*nowhere = 1;
	query("after faults", SIGSEGV);
	blocked_now("main", 0);
	printf("deliveries %d\n", deliveries);
	return 0;
}
