/*
 * clock.h - clock.c: the engine's clock.
 */
#ifndef GFP_CLOCK_H
#define GFP_CLOCK_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t gfp_now_ns(void);

#pragma GCC visibility pop

#endif /* GFP_CLOCK_H */
