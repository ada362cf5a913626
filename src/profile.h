/*
 * profile.h - stats=sites in the profiled routes (preload/routes.c): a block
 * jemalloc just returned is counted, and a freed one taken out, in line,
 * when the thread's last caller and the shadow map's one-word form cover
 * the call. Whatever they do not cover goes through the shim to profile.c,
 * which owns the map and the caller indexes and keeps the same rules.
 *
 * The map's layout (profile.c): a 16-bit entry per 8-byte granule, in
 * leaves of a 2 MiB chunk each, which the thread's cache in gfp_tls.caller
 * finds without a lock. A
 * block's first granule holds its caller entry (the caller index, TINY for an
 * 8-byte block); a block of 16 bytes to 128 KiB, which jemalloc always
 * starts on a 16-byte boundary, has its size entry (its usable size in
 * granules, and SIZE) in the second. So such a block's two entries are one
 * aligned 32-bit word (the word of p >> 4), and its sign bit is set exactly
 * when the word describes a block that starts at p and has a size entry:
 * a caller entry never has bit 15.
 */
#ifndef GFP_PROFILE_H
#define GFP_PROFILE_H

#include "internal.h"

#define GFP_SHADOW_TINY 0x4000u /* a caller entry: usable size 8 */
#define GFP_SHADOW_SIZE 0x8000u /* a size entry: granules below */
#define GFP_SHADOW_MASK 0x3fffu /* a caller index, or a size in granules */

/* The largest request whose usable size gfp_size_words gives: jemalloc's
 * largest small size class with 4 KiB pages. An aligned request's usable
 * size is that of its size rounded up to its alignment (jemalloc's
 * sz_sa2u) while the rounded size stays within it and the alignment within
 * a page. */
#define GFP_SIZE_TABLE_MAX 14336

#define GFP_CHUNK_SHIFT 21
#define GFP_CHUNK_SIZE  ((uintptr_t)1 << GFP_CHUNK_SHIFT)
#define GFP_GRANULE     3

/* The upper half of the map word of malloc(n), for n up to
 * GFP_SIZE_TABLE_MAX: its usable size in granules, and SIZE. */
extern uint32_t gfp_size_words[GFP_SIZE_TABLE_MAX + 1];

/* The thread's cache entry for the chunk of address a. */
static inline struct gfp_leaf_ref *gfp_leaf_ref(uintptr_t a)
{
	uintptr_t chunk = (a >> GFP_CHUNK_SHIFT) + 1;
	return &gfp_tls.caller.leaves[chunk % (sizeof(gfp_tls.caller.leaves) /
	                                       sizeof(gfp_tls.caller.leaves[0]))];
}

/* The map word of the 16 bytes at p in *w, when p is in the chunk of the
 * routes' leaf. */
static inline bool gfp_route_word(const void *p, uint32_t **w)
{
	uintptr_t d = (uintptr_t)p - gfp_tls.caller.base;
	*w = (uint32_t *)(gfp_tls.caller.words + ((uintptr_t)p >> (GFP_GRANULE + 1)) * 4);
	return d < GFP_CHUNK_SIZE;
}

static inline unsigned gfp_recent_slot(uintptr_t caller)
{
	return (unsigned)((caller * 0x9e3779b97f4a7c15ULL) >> 58);
}

/* Makes idx, the index of caller, the thread's last. The caller last, so
 * that a signal handler's route never pairs it with another caller's index. */
static inline void gfp_caller_make_last(uintptr_t caller, unsigned idx)
{
	struct gfp_caller_cache *sc = &gfp_tls.caller;
	__atomic_store_n(&sc->caller, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sc->idx = idx;
	sc->last = &sc->counts[idx];
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&sc->caller, caller, __ATOMIC_RELAXED);
}

/* Makes caller the thread's last when the thread has used it lately;
 * false when profile.c must look it up. (A thread's recent callers are
 * cleared as it exits, with its counts.) */
static inline bool profile_route_switch(uintptr_t caller)
{
	const struct gfp_recent_caller *r = &gfp_tls.caller.recent[gfp_recent_slot(caller)];
	if (r->caller != caller || !caller)
		return false;
	gfp_caller_make_last(caller, r->idx);
	return true;
}

/* Counts block p, which jemalloc just gave for a request of `size` bytes
 * whose usable size is that of malloc(fit), at the thread's last caller, and
 * writes its map word: false when the call is not that caller's, `fit` is
 * outside 9..GFP_SIZE_TABLE_MAX (8-byte blocks share a word) or p is outside
 * the routes' chunk: the route asks profile_route_switch, or profile.c
 * counts it. The counts and the word are those profile_count writes; the
 * block's live bytes are in the word alone (profile.c walks the map for
 * them). */
static inline bool profile_route_count(void *p, enum gfp_entry e, size_t size, size_t fit,
                                       uintptr_t caller)
{
	struct gfp_caller_cache *sc = &gfp_tls.caller;
	uint32_t *w;
	if (unlikely(caller != sc->caller || fit - 9 > GFP_SIZE_TABLE_MAX - 9 ||
	             !gfp_route_word(p, &w)))
		return false;
	struct gfp_caller_counts *c = sc->last;
	gfp_count(&c->calls, 1);
	gfp_count(&c->bytes, size);
	struct gfp_entry_stats *s = &gfp_tls.stats[e];
	gfp_count(&s->calls, 1);
	gfp_count(&s->bytes, size);
	__atomic_store_n(w, gfp_size_words[fit] | sc->idx, __ATOMIC_RELAXED);
	return true;
}

/* Makes the chunk of p the routes' (its leaf mapped if it has none yet):
 * false when the thread does not count or no leaf can be mapped. */
bool profile_route_rechunk(void *p);

/* profile_route_free for a block outside the routes' chunk. */
bool profile_route_free_other(void *p);

/* Takes block p out of the map before jemalloc frees it: false when the
 * word does not describe it (p is NULL, an 8-byte or large block, one not
 * counted, one outside the routes' chunk) or the thread does not count (its
 * routes' leaf is then none). While anyone waits for memory free's route
 * is the shim's, which wakes them. */
static inline bool profile_route_free(void *p)
{
	uint32_t *w;
	if (unlikely(!gfp_route_word(p, &w)))
		return false;
	uint32_t v = __atomic_load_n(w, __ATOMIC_RELAXED);
	if (unlikely((int32_t)v >= 0))
		return false;
	__atomic_store_n(w, 0, __ATOMIC_RELAXED);
	gfp_count(&gfp_tls.stats[GFP_E_free].calls, 1);
	return true;
}

#endif /* GFP_PROFILE_H */
