/*
 * profile_thread.c - each thread's counts for stats=sites: folded into the
 * dead threads' at its exit, and summed over every thread, with the blocks
 * the shadow map alone counts, for a report.
 */
#include <pthread.h>
#include <string.h>

#include "policy.h"
#include "thread.h"
#include "profile_api.h"
#include "profile.h"
#include "profile_externs.h"

static void fold(struct gfp_caller_counts *into, const struct gfp_caller_counts *from, unsigned n)
{
	for (unsigned i = 1; i <= n; i++) {
		const struct gfp_caller_counts *f = &from[i];
		struct gfp_caller_counts *t = &into[i];
		t->live_bytes += __atomic_load_n(&f->live_bytes, __ATOMIC_RELAXED);
		t->live_calls += __atomic_load_n(&f->live_calls, __ATOMIC_RELAXED);
		t->calls += __atomic_load_n(&f->calls, __ATOMIC_RELAXED);
		t->bytes += __atomic_load_n(&f->bytes, __ATOMIC_RELAXED);
		t->failures += __atomic_load_n(&f->failures, __ATOMIC_RELAXED);
		t->injections += __atomic_load_n(&f->injections, __ATOMIC_RELAXED);
		t->retries += __atomic_load_n(&f->retries, __ATOMIC_RELAXED);
		uint64_t m = __atomic_load_n(&f->max_stall_ns, __ATOMIC_RELAXED);
		if (m > t->max_stall_ns)
			t->max_stall_ns = m;
	}
}

/* A thread ends: its counts join the dead threads' and its array is
 * cleared for the next thread that gets its block. */
void profile_thread_exit(struct gfp_thread *t)
{
	/* Its own exit: its later calls, counted nowhere, take the shim's way
	 * (the leaves stay: the map outlives every thread). */
	for (unsigned i = 0; i < GFP_LAST_SLOTS; i++)
		__atomic_store_n(&gfp_tls.caller.last[i].caller, 0, __ATOMIC_RELAXED);
	gfp_tls.caller.missed = 0;
	memset(gfp_tls.caller.recent, 0, sizeof(gfp_tls.caller.recent));
	gfp_tls.caller.counts = NULL;
	if (!t->callers)
		return;
	unsigned n = __atomic_load_n(&profile_ncallers, __ATOMIC_ACQUIRE);
	/* Both under the lock a report holds throughout, so that no report
	 * sees the counts both in dead and in the thread. */
	gfp_lock(&profile_lock);
	fold(profile_dead, t->callers, n);
	memset(t->callers, 0, (n + 1) * sizeof(struct gfp_caller_counts));
	gfp_unlock(&profile_lock);
}

/* One caller entry's block, if the map alone counts it: an 8-byte block, or
 * one whose size entry `next` is. */
static inline void walk_entry(struct gfp_caller_counts *sum, unsigned n, unsigned e, unsigned next)
{
	unsigned idx = e & GFP_SHADOW_MASK;
	size_t usable;
	if (!idx || idx > n || (e & GFP_SHADOW_SIZE))
		return;
	if (e & GFP_SHADOW_TINY)
		usable = 1u << GFP_GRANULE;
	else if (next & GFP_SHADOW_SIZE)
		usable = (size_t)(next & GFP_SHADOW_MASK) << GFP_GRANULE;
	else
		return; /* counted apart */
	sum[idx].live_bytes += (int64_t)usable;
	sum[idx].live_calls++;
}

/* The live blocks the map alone counts (shadow_apart), added to their callers:
 * a free then only clears its block's word. A 16-byte-aligned word holds a
 * block's two entries, or the caller entries of two 8-byte blocks. Frees and
 * allocations meanwhile make it a moment's view, as the counters are. */
static void walk_live(struct gfp_caller_counts *sum, unsigned n)
{
	for (unsigned d = 0; d < PROFILE_DIR_LEN; d++) {
		if (!__atomic_load_n(&profile_dir[d].chunk, __ATOMIC_ACQUIRE))
			continue;
		const uint32_t *leaf = (const uint32_t *)profile_dir[d].leaf;
		for (unsigned k = 0; k < PROFILE_LEAF_LEN / 2; k++) {
			uint32_t w = __atomic_load_n(&leaf[k], __ATOMIC_RELAXED);
			if (!w)
				continue;
			unsigned lo = w & 0xffff, hi = w >> 16;
			walk_entry(sum, n, lo, hi);
			if (!(hi & GFP_SHADOW_SIZE))
				walk_entry(sum, n, hi, 0);
		}
	}
}

/* Every caller's counts as of now into sum[1..]: how many callers. The
 * dead threads', the living threads', the blocks the map alone counts, and
 * the orphans'. */
unsigned profile_thread_sum(struct gfp_caller_counts *sum)
{
	unsigned n = __atomic_load_n(&profile_ncallers, __ATOMIC_ACQUIRE);
	gfp_lock(&profile_lock); /* lock, then registry_lock: never the other way */
	memcpy(sum, profile_dead, (n + 1) * sizeof(sum[0]));
	thread_each_callers(fold, sum, n);
	gfp_unlock(&profile_lock);
	walk_live(sum, n);
	for (unsigned i = 1; i <= n; i++) {
		sum[i].live_bytes += __atomic_load_n(&profile_orphan[i].bytes, __ATOMIC_RELAXED);
		sum[i].live_calls += __atomic_load_n(&profile_orphan[i].calls, __ATOMIC_RELAXED);
	}
	return n;
}
