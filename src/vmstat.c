/*
 * vmstat.c - the process's reclaim counters, after the kernel's
 * /proc/vmstat: how many requests stalled in direct reclaim (allocstall)
 * and for how long, and what background reclaim did (kswapd.c). Counted on
 * the slow path and by the reclaim thread only; in the report as "vmstat".
 * And the memory.events of the budget (cgroup.c, oom.c, tree_oom.c), the
 * process's and its tree's, in the report as "memory_events" and
 * "tree_memory_events", with the memory.high penalties as "memory_high".
 */
#include <string.h>

#include "internal.h"
#include "vmstat.h"

struct gfp_vmstat gfp_vmstat;

void vmstat_add(uint64_t *counter, uint64_t n)
{
	__atomic_add_fetch(counter, n, __ATOMIC_RELAXED);
}

void vmstat_stall(uint64_t ns)
{
	vmstat_add(&gfp_vmstat.allocstall, 1);
	vmstat_add(&gfp_vmstat.stall_ns, ns);
	uint64_t max = __atomic_load_n(&gfp_vmstat.stall_ns_max, __ATOMIC_RELAXED);
	while (ns > max && !__atomic_compare_exchange_n(&gfp_vmstat.stall_ns_max, &max, ns, true,
	                                                __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static const char *const memcg_name[GFP_MEMCG_EVENTS] = {
    "low", "high", "max", "oom", "oom_kill", "oom_group_kill",
};

void vmstat_memcg_event(enum gfp_memcg_event e)
{
	vmstat_add(&gfp_vmstat.memcg[e], 1);
	if (gfp_tree_on)
		tree_memcg_event((unsigned)e);
}

void vmstat_high_delay(uint64_t ns)
{
	vmstat_add(&gfp_vmstat.high_sleeps, 1);
	vmstat_add(&gfp_vmstat.high_delay_ns, ns);
	uint64_t max = __atomic_load_n(&gfp_vmstat.high_delay_ns_max, __ATOMIC_RELAXED);
	while (ns > max && !__atomic_compare_exchange_n(&gfp_vmstat.high_delay_ns_max, &max, ns,
	                                                true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static unsigned long long get(const uint64_t *c)
{
	return (unsigned long long)__atomic_load_n(c, __ATOMIC_RELAXED);
}

void vmstat_report(struct gfp_buf *b)
{
	if (!gfp_budget_on && !gfp_policy.kswapd)
		return;
	const struct gfp_vmstat *v = &gfp_vmstat;
	gfp_buf_printf(b,
	               ",\"vmstat\":{\"allocstall\":%llu,\"allocstall_us\":%llu,"
	               "\"max_stall_us\":%llu,\"kswapd_wake\":%llu,\"kswapd_rounds\":%llu,"
	               "\"kswapd_reclaimed\":%llu,\"kswapd_hopeless\":%llu,\"psi_events\":%llu}",
	               get(&v->allocstall), get(&v->stall_ns) / 1000, get(&v->stall_ns_max) / 1000,
	               get(&v->kswapd_wake), get(&v->kswapd_rounds), get(&v->kswapd_freed),
	               get(&v->kswapd_hopeless), get(&v->psi_events));
	if (!gfp_budget_on)
		return;
	uint64_t tree[GFP_MEMCG_EVENTS];
	for (int which = 0; which < 2; which++) {
		if (which && !(gfp_tree_on && tree_memcg_events(tree, GFP_MEMCG_EVENTS)))
			break;
		gfp_buf_printf(b, which ? ",\"tree_memory_events\":{" : ",\"memory_events\":{");
		for (int e = 0; e < GFP_MEMCG_EVENTS; e++)
			gfp_buf_printf(b, "%s\"%s\":%llu", e ? "," : "", memcg_name[e],
			               which ? (unsigned long long)tree[e] : get(&v->memcg[e]));
		gfp_buf_printf(b, "}");
	}
	gfp_buf_printf(
	    b, ",\"memory_high\":{\"sleeps\":%llu,\"delay_us\":%llu,\"max_delay_us\":%llu}",
	    get(&v->high_sleeps), get(&v->high_delay_ns) / 1000, get(&v->high_delay_ns_max) / 1000);
}

/* The child counts its own, as its statistics do. */
void vmstat_atfork_child(void)
{
	memset(&gfp_vmstat, 0, sizeof(gfp_vmstat));
}
