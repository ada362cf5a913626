/*
 * cgroup.h - cgroup.c: limit=cgroup, the budget that follows the process's
 * memory cgroup: memory.max its hard limit, memory.high a throttle.
 */
#ifndef GFP_CGROUP_H
#define GFP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "types.h"

#pragma GCC visibility push(hidden)

/* limit=cgroup found a cgroup with a limit: the budget follows it. */
extern bool gfp_cgroup_on;

/* At start-up, before the policy is derived: finds the cgroup of
 * limit=cgroup. Without a memory cgroup or a limit it warns and sets
 * limit=0 (no budget). */
void cgroup_resolve_policy(void);
/* What the cgroup's memory.max leaves this process (its tree) now, read
 * from its files; the last value read when they cannot be read
 * (budget_init, under its lock). */
int64_t cgroup_budget_now(void);
/* Where the budget looks anyway, each rate-limited: a thread's allowance
 * grant (every 100 ms at most), an exact decision near the watermark (every
 * millisecond at most); after reclaim, at once. A grant or a decision past
 * memory.high also runs up the thread's debt (gfp_memcg_over_high). */
void cgroup_tick(void);
void cgroup_near(void);
void cgroup_after_reclaim(void);
/* A round of direct reclaim of request `req` freed `freed` bytes: the
 * cgroup's figures again, and its memory.events (max, low). */
void cgroup_direct_reclaimed(const struct gfp_req *req, size_t freed);
/* The Mem-Info line of OOM and allocation-failure reports. */
void cgroup_show_mem(struct gfp_buf *b, const char *prefix);

/* True when request `req`'s failed attempt met the cgroup's memory.max:
 * the slow path follows try_charge_memcg, and its OOM step is a memcg OOM
 * (mem_cgroup_oom). */
static inline bool cgroup_charge_failed(const struct gfp_req *req)
{
	return gfp_cgroup_on && req->why == GFP_WHY_BUDGET;
}
/* memory.oom.group is 1 from the process's cgroup up to the level whose
 * memory.max it met (mem_cgroup_get_oom_group); read now. */
bool cgroup_oom_group(void);

/* memory.high (mem_cgroup_handle_over_high): bytes the thread charged
 * past memory.high and has not paid for yet. The request that ran them up
 * pays before it returns, when it may block: cgroup_high.c. */
extern __thread uint64_t gfp_memcg_over_high __attribute__((tls_model("initial-exec")));
/* The live bytes past which memory.high is passed (INT64_MAX: none), and
 * that memory.high in *value (0: none). */
int64_t cgroup_throttle_at(int64_t *value);
/* The cgroup's figures read again (one thread at a time); the budget
 * follows a change of more than a batch, or any when `force`. */
void cgroup_refresh(bool force);

void cgroup_atfork_child(void);
/* The memory.pressure file of the process's cgroup v2 (PSI triggers,
 * kswapd.psi), into out; false when there is none. Not on a request's path. */
bool cgroup_pressure_file(char *out, size_t cap);

#pragma GCC visibility pop

#endif /* GFP_CGROUP_H */
