/*
 * kswapd.h - kswapd.c: background reclaim between the low and high
 * watermarks; vmstat.c: the process's reclaim counters.
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

#endif /* GFP_KSWAPD_H */
