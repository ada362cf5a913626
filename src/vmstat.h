/*
 * vmstat.h - vmstat.c: the process's reclaim counters, after /proc/vmstat
 * and a cgroup's memory.events.
 */
#ifndef GFP_VMSTAT_H
#define GFP_VMSTAT_H

#include <stdint.h>

#include "policy.h"

#pragma GCC visibility push(hidden)

/* memory.events as the shim meets them (memcg_memory_event): under
 * limit=cgroup its memory.max and memory.high, under limit=SIZE the
 * budget's limit. Counted per process and, under limit.scope=tree, per
 * tree too. */
enum gfp_memcg_event {
	GFP_MEMCG_LOW,            /* reclaimed while at or under memory.low */
	GFP_MEMCG_HIGH,           /* reclaimed (and maybe slept) past memory.high */
	GFP_MEMCG_MAX,            /* a charge met the limit: a round of reclaim, or forced past */
	GFP_MEMCG_OOM,            /* the OOM step ran (mem_cgroup_oom) */
	GFP_MEMCG_OOM_KILL,       /* processes the OOM step killed */
	GFP_MEMCG_OOM_GROUP_KILL, /* group kills (memory.oom.group) */
	GFP_MEMCG_EVENTS
};
void vmstat_memcg_event(enum gfp_memcg_event e);
/* A thread slept `ns` past memory.high (mem_cgroup_handle_over_high). */
void vmstat_high_delay(uint64_t ns);

/* vmstat.c: after /proc/vmstat's allocstall, pgsteal_kswapd, pageoutrun. */
struct gfp_vmstat {
	uint64_t allocstall;      /* requests that entered direct reclaim */
	uint64_t stall_ns;        /* their time in the slow path, summed */
	uint64_t stall_ns_max;    /* the longest */
	uint64_t kswapd_wake;     /* wakes of the thread */
	uint64_t kswapd_rounds;   /* its rounds of reclaim */
	uint64_t kswapd_freed;    /* what its rounds freed */
	uint64_t kswapd_hopeless; /* times it gave up after rounds without progress */
	uint64_t psi_events;      /* PSI triggers that woke it */
	uint64_t memcg[GFP_MEMCG_EVENTS];
	uint64_t high_sleeps;   /* penalties slept past memory.high */
	uint64_t high_delay_ns; /* their time, summed */
	uint64_t high_delay_ns_max;
};
extern struct gfp_vmstat gfp_vmstat;
/* A request that entered direct reclaim spent `ns` in the slow path. */
void vmstat_stall(uint64_t ns);
void vmstat_add(uint64_t *counter, uint64_t n);
/* ,"vmstat":{...} for the report, under a budget or kswapd=1; under a
 * budget ,"memory_events":{...} and ,"memory_high":{...}, and under a
 * tree ,"tree_memory_events":{...} too. */
void vmstat_report(struct gfp_buf *b);
void vmstat_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_VMSTAT_H */
