/*
 * crash.c - a record of every fatal signal (SEGV, BUS, ABRT, FPE, ILL), so
 * that a crash after an injected failure is tied to it in the records.
 *
 * Installed only with GFP_RECORD. The handler writes the record with the
 * crash's backtrace, puts back the handler that was there before (the
 * program's, or the default) and lets the signal happen again. A program
 * that installs its own handler later replaces this one: then its handler
 * decides, and no crash record is written.
 */
#include <signal.h>
#include <string.h>

#include "thread.h"
#include "unwind.h"
#include "records.h"
#include "crash.h"

static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
static struct sigaction previous[NSIG];

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	gfp_tls.guard++;
	struct gfp_frame frames[32];
	int n = unwind_capture_signal(frames, 32);
	char extra[96];
	gfp_snprintf(extra, sizeof(extra), "\"signal\":%d,\"code\":%d,\"addr\":\"%p\"", sig,
	             si->si_code, si->si_addr);
	record_event("crash", NULL, frames, n, extra);
	sigaction(sig, &previous[sig], NULL);
	gfp_tls.guard--;
	/* A fault repeats when the instruction runs again; a sent signal must
	 * be sent again (abort() does that itself, raising twice is harmless). */
	if (si->si_code <= 0)
		raise(sig);
}

void crash_init(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, &previous[fatal[i]]);
}
