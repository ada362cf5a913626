/*
 * kswapd.h - kswapd.c: background reclaim between the low and high
 * watermarks.
 */
#ifndef GFP_KSWAPD_H
#define GFP_KSWAPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "gfpshim.h"

#pragma GCC visibility push(hidden)

/* kswapd=1 under a budget: the budget calls kswapd_check. */
extern bool gfp_kswapd_on;
/* The budget derived its watermarks (budget.c derive_watermarks, under its
 * lock): low and high follow from the same limit and min_free. */
void kswapd_marks(int64_t limit, int64_t min_free);
/* Where the budget looks anyway (an allowance grant, an exact decision):
 * wakes the thread, making it the first time, when the shared estimate of
 * live bytes passed the low watermark. Holds no lock of the shim. */
void kswapd_check(void);
/* The watermarks in live bytes: kswapd wakes above *wake, stops at *high. */
void kswapd_watermarks(int64_t *wake, int64_t *high);
void kswapd_atfork_prepare(void);
void kswapd_atfork_parent(void);
void kswapd_atfork_child(void);

/* The slow path's entry and each of its rounds (wake_all_kswapds): wakes
 * the thread unless the budget is balanced (live bytes under the high
 * watermark) or the thread is hopeless. A request without
 * __GFP_KSWAPD_RECLAIM wakes nothing. Holds no lock of the shim. */
void kswapd_wake_all(gfp_t f);
/* A round of direct reclaim freed `freed` bytes: a thread that gave up
 * (hopeless) is woken again from now on (shrink_node). */
void kswapd_direct_reclaimed(size_t freed);

#pragma GCC visibility pop

#endif /* GFP_KSWAPD_H */
