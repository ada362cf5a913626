/*
 * profile_structs.h - profile.c's part of the thread-local state
 * (gfp_tls.caller, thread.h), apart from profile.h so that thread.h can embed it.
 */
#ifndef GFP_PROFILE_STRUCTS_H
#define GFP_PROFILE_STRUCTS_H

#include <stdint.h>

#define GFP_LAST_SLOTS 5

/* profile.c, stats=sites: the thread's count array (NULL until it
 * counts, and past its exit) and, per kind of entry (gfp_last_slot), the
 * caller it counted last, which the profiled routes count into without
 * looking its index up (caller 0: none): a loop that takes aligned blocks
 * three ways calls from three places. */
struct gfp_caller_cache {
	struct gfp_caller_counts *counts;
	struct gfp_caller_last {
		uintptr_t caller;
		struct gfp_caller_counts *c; /* &counts[idx] */
		uint32_t idx;
	} last[GFP_LAST_SLOTS];
	/* The caller the last miss of a route found among the recent ones:
	 * missing twice in a row, it becomes its slot's last. */
	uintptr_t missed;
	/* The callers it used lately, by address (gfp_recent_slot; 0:
	 * empty), where a route finds a call's index when it is not the
	 * last one's: the caller in the low 48 bits and its index above,
	 * one word, so that a signal handler's rewrite of the slot is
	 * read whole or not at all. */
	uint64_t recent[64];
};

#endif /* GFP_PROFILE_STRUCTS_H */
