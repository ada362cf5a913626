/*
 * profile_structs.h - profile.c's part of the thread-local state
 * (gfp_tls.caller, thread.h), apart from profile.h so that thread.h can embed it.
 */
#ifndef GFP_PROFILE_STRUCTS_H
#define GFP_PROFILE_STRUCTS_H

#include <stdint.h>

/* profile.c, stats=sites: the thread's count array (NULL until it
 * counts, and past its exit) and the caller it counted last, which the
 * profiled routes count into without looking its index up (caller 0:
 * none). */
struct gfp_caller_cache {
	struct gfp_caller_counts *counts, *last; /* last = &counts[idx] */
	uintptr_t caller;
	uint32_t idx;
	/* The routes' leaf of the shadow map: that of the chunk
	 * that starts at `base` (GFP_ROUTE_NONE: none), while the
	 * thread counts. */
	uintptr_t base;
	/* That leaf's address less base / 4: the map word of p in
	 * the chunk is at words + (p >> 4) * 4. */
	uintptr_t words;
	/* The shadow map's leaves of the chunks the thread used last,
	 * by chunk number + 1 (0: empty): a live set of mixed sizes
	 * spans several chunks (32 cover 64 MiB of heap; 8 missed on
	 * allocbench's mixed). */
	struct gfp_leaf_ref {
		uintptr_t chunk;
		uint16_t *leaf;
	} leaves[32];
	/* The callers it used lately, by address (gfp_recent_slot;
	 * caller 0: empty), where a route finds a call's index when it
	 * is not the last one's. */
	struct gfp_recent_caller {
		uintptr_t caller;
		uint32_t idx;
	} recent[64];
};

#endif /* GFP_PROFILE_STRUCTS_H */
