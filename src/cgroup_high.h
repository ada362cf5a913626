/*
 * cgroup_high.h - cgroup_high.c: memory.high's throttle
 * (mem_cgroup_handle_over_high).
 */
#ifndef GFP_CGROUP_HIGH_H
#define GFP_CGROUP_HIGH_H

#include <stdint.h>

#include "types.h"

#pragma GCC visibility push(hidden)

/* The thread's debt past memory.high (gfp_memcg_over_high, cgroup.h) paid
 * before the request returns, when it may block. */
void cgroup_high_handle(struct gfp_req *req);
/* mem_cgroup_handle_over_high's penalty (calculate_high_delay) in ms for
 * `over` bytes past a memory.high of `high` bytes, after `charged` bytes
 * charged past it: at most 2000 (MEMCG_MAX_HIGH_DELAY_JIFFIES). Pure. */
uint64_t cgroup_high_delay_ms(int64_t over, int64_t high, uint64_t charged);

#pragma GCC visibility pop

#endif /* GFP_CGROUP_HIGH_H */
