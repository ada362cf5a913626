/*
 * cgroup.h - cgroup.c: limit=cgroup, the budget that follows the process's
 * memory cgroup.
 */
#ifndef GFP_CGROUP_H
#define GFP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

#pragma GCC visibility push(hidden)

/* limit=cgroup found a cgroup with a limit: the budget follows it. */
extern bool gfp_cgroup_on;

/* At start-up, before the policy is derived: finds the cgroup of
 * limit=cgroup. Without a memory cgroup or a limit it warns and sets
 * limit=0 (no budget). */
void cgroup_resolve_policy(void);
/* What the cgroup leaves this process now, read from its files; the last
 * value read when they cannot be read (budget_init, under its lock). */
int64_t cgroup_budget_now(void);
/* Where the budget looks anyway, each rate-limited: a thread's allowance
 * grant (every 100 ms at most), an exact decision near the watermark (every
 * millisecond at most); after reclaim, at once. */
void cgroup_tick(void);
void cgroup_near(void);
void cgroup_after_reclaim(void);
/* The Mem-Info line of OOM and allocation-failure reports. */
void cgroup_show_mem(struct gfp_buf *b, const char *prefix);

void cgroup_atfork_child(void);
/* The memory.pressure file of the process's cgroup v2 (PSI triggers,
 * kswapd.psi), into out; false when there is none. Not on a request's path. */
bool cgroup_pressure_file(char *out, size_t cap);

/* One line of /proc/self/mountinfo (without its newline): the directory of
 * cgroup path `path` when the line mounts the hierarchy it is in (fstype
 * cgroup2 when v2, else cgroup with the memory controller); false
 * otherwise or when out (cap bytes) is too small. Pure: the unit test
 * calls it. */
bool cgroup_mount_dir(const char *line, size_t len, bool v2, const char *path, char *out,
                      size_t cap);

#pragma GCC visibility pop

#endif /* GFP_CGROUP_H */
