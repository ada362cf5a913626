/*
 * crash.h - crash.c: the fatal-signal records, and the program's own
 * handlers of those signals chained behind the shim's.
 */
#ifndef GFP_CRASH_H
#define GFP_CRASH_H

#include <signal.h>
#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* GFP_RECORD: the shim's handler for SEGV, BUS, ABRT, FPE and ILL. */
void crash_init(void);
/* Whether sig's action is the shim's to keep (crash_init ran). */
bool crash_holds(int sig);
/* sigaction as the program sees it: for a signal crash_holds, its own
 * action kept in crash.c's table; any other goes to libc's. Any context. */
int crash_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* A longjmp is leaving this thread's program handlers, if it is in any. */
void crash_jumped(void);

#pragma GCC visibility pop

#endif /* GFP_CRASH_H */
