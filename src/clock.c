/*
 * clock.c - the engine's clock, in which its stalls, ages and rate limits
 * are counted (CLOCK_MONOTONIC; a timed wait takes its deadline on the
 * clock of the call that waits). A file of its own, below everything that
 * reads it: a test's simulated engine stands a clock of its own in for it
 * (tests/unit/slowsim.h). It reads the clock and nothing else: no lock, no
 * allocation, no call into the engine.
 */
#include <time.h>

#include "clock.h"

uint64_t gfp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
