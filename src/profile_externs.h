/*
 * profile_externs.h - profile.c's state and lookups that the other files of
 * stats=sites (profile_thread.c, profile_mapped.c) share: never the engine's.
 */
#ifndef GFP_PROFILE_EXTERNS_H
#define GFP_PROFILE_EXTERNS_H

#include <pthread.h>
#include <stdint.h>

#include "types.h"
#include "profile_api.h"
#include "profile.h"

#pragma GCC visibility push(hidden)

#define PROFILE_LEAF_LEN (1u << (GFP_CHUNK_SHIFT - GFP_GRANULE))
#define PROFILE_DIR_LEN  65536 /* 128 GiB of heap in 2 MiB chunks */

/* Guards the callers' table, the directory's new leaves and the dead
 * threads' counts. */
extern pthread_mutex_t profile_lock;
/* Callers with an index so far, 1..profile_ncallers (atomic). */
extern unsigned profile_ncallers;
/* Exited threads' counts, under profile_lock. */
extern struct gfp_caller_counts profile_dead[PROFILE_MAX_CALLERS];
/* Live bytes and calls given back by frees without counts of their own to
 * take them from (a thread past its exit, whose counts joined the dead's):
 * atomic, as such a free may come from anywhere, even from under
 * profile_lock. */
struct profile_orphan {
	int64_t bytes, calls;
};
extern struct profile_orphan profile_orphan[PROFILE_MAX_CALLERS];
/* The shadow map's directory: a leaf per 2 MiB chunk, open addressing. */
struct profile_dir_slot {
	uintptr_t chunk; /* atomic: chunk number + 1; 0 = empty */
	uint16_t *leaf;
};
extern struct profile_dir_slot profile_dir[PROFILE_DIR_LEN];

/* The calling thread's counts, NULL if it has none and can get none. */
struct gfp_caller_counts *profile_counts(void);
/* The caller index of req's caller, given one the first time (0: the
 * table is full). */
unsigned profile_caller_index(const struct gfp_req *req);
/* A caller's large blocks' live bytes change by `delta` (and their peak
 * follows), across threads. */
void profile_apart_add(unsigned idx, int64_t delta);

#pragma GCC visibility pop

#endif /* GFP_PROFILE_EXTERNS_H */
