/*
 * inject.h - inject.c: fault injection (the fail.* keys).
 */
#ifndef GFP_INJECT_H
#define GFP_INJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"
#include "site.h"
#include "thread.h"
#include "types.h"

#pragma GCC visibility push(hidden)

extern double gfp_inject_probability;
extern bool gfp_main_started; /* atomic: main() was entered (preload/start.c) */
void inject_init(void);
/* GFP_INJECT_PID names another process: this one neither injects nor
 * reports (its GFP_REPORT would overwrite the one under test's). */
bool inject_other_process(void);
/* What the paths report (stats.c) prints of injection's counts: eligible
 * calls of the process, and calls made by threads but the initial one. */
uint64_t inject_eligible_calls(void);
uint64_t inject_other_thread_calls(void);
bool inject_should_fail(struct gfp_req *req, bool at_attempt);
uint64_t inject_child_ordinal(void);
void inject_atfork_child(void);
void inject_fired(const struct gfp_req *req);
uint64_t inject_seed_rng(void);
bool inject_simple_fire(struct gfp_req *req);
bool inject_countdown(struct gfp_req *req);

/* The thread's generator (xorshift64*): seeded from fail.seed and the
 * thread's creation order, so a seed reproduces with threads. */
static inline double inject_draw(void)
{
	uint64_t x = gfp_tls.inject.rng;
	if (unlikely(!x))
		x = inject_seed_rng();
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	gfp_tls.inject.rng = x;
	return (double)((x * 0x2545f4914f6cdd1dULL) >> 11) * (1.0 / 9007199254740992.0);
}

int64_t inject_next_gap(void);

/* The simple mode's check for a thread under the policy: eligible (main
 * started, not ld.so) and the call the thread's gap chose. The same gaps
 * from the same generator as an idle thread's countdown (inject_countdown),
 * so a seed fails the same calls whatever else the policy holds. NOFAIL
 * and the stack filter come after (inject_simple_fire). */
static inline bool inject_simple_candidate(uintptr_t caller)
{
	if (unlikely(!__atomic_load_n(&gfp_main_started, __ATOMIC_RELAXED)) || site_in_ldso(caller))
		return false;
	gfp_tls.inject.calls++;
	if (gfp_tls.inject_left == 0)
		gfp_tls.inject_left = inject_next_gap();
	return --gfp_tls.inject_left == 0;
}

#pragma GCC visibility pop

#endif /* GFP_INJECT_H */
