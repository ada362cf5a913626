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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"
#include "thread.h"
#include "profile_api.h"

#define GFP_SHADOW_TINY 0x4000u /* a caller entry: usable size 8 */
#define GFP_SHADOW_SIZE 0x8000u /* a size entry: granules below */
#define GFP_SHADOW_MASK 0x3fffu /* a caller index, or a size in granules */

/* The largest request whose usable size gfp_route_map.size gives: jemalloc's
 * largest small size class with 4 KiB pages. An aligned request's usable
 * size is that of its size rounded up to its alignment (jemalloc's
 * sz_sa2u) while the rounded size stays within it and the alignment within
 * a page. */
#define GFP_SIZE_TABLE_MAX 14336

#define GFP_CHUNK_SHIFT 21
#define GFP_CHUNK_SIZE  ((uintptr_t)1 << GFP_CHUNK_SHIFT)
#define GFP_GRANULE     3

/* What the routes read, in one object (one base address): the routes'
 * directory of the shadow map, the leaf of each chunk the map has by the
 * low bits of its chunk number, for every thread, without a lock (an entry
 * is written once, under profile.c's lock, its words before its chunk, and
 * never changes: a chunk whose entry another holds is not the routes', and
 * 32 GiB of heap fit before one does); and the sizes' map words. */
#define GFP_ROUTE_BITS   14
#define GFP_SIZE_MID_MAX (112u << 10)
struct gfp_route_map {
	/* The chunk number of each entry; 0: none ([0]: an impossible one,
	 * so that NULL matches nothing). */
	uintptr_t chunk[1u << GFP_ROUTE_BITS];
	/* The leaf's address less the chunk's / 4: the map word of p is at
	 * words + (p >> 4) * 4. */
	uintptr_t words[1u << GFP_ROUTE_BITS];
	/* The upper half of the map word of malloc(n), for n up to
	 * GFP_SIZE_TABLE_MAX: its usable size in granules, and SIZE. */
	uint32_t size[GFP_SIZE_TABLE_MAX + 1];
	/* Beyond the small sizes, jemalloc's classes are whole pages: the
	 * word of malloc(n) for n up to GFP_SIZE_MID_MAX, by n's pages
	 * ((n + 4095) >> 12); 0 where the pages do not tell the class. */
	uint32_t size_mid[(GFP_SIZE_MID_MAX >> 12) + 1];
};
extern struct gfp_route_map gfp_route_map;

/* The map word of the 16 bytes at p in *w, when the routes have the leaf
 * of p's chunk. */
static inline bool gfp_route_word(const void *p, uint32_t **w)
{
	uintptr_t c = (uintptr_t)p >> GFP_CHUNK_SHIFT;
	size_t i = c & ((1u << GFP_ROUTE_BITS) - 1);
	/* A plain load, which a compare can take: the entry's words were
	 * written before its chunk, and the compiler may not read them
	 * first (x86 does not). */
	if (unlikely(gfp_route_map.chunk[i] != c))
		return false;
	__atomic_signal_fence(__ATOMIC_ACQUIRE);
	*w = (uint32_t *)(gfp_route_map.words[i] + ((uintptr_t)p >> (GFP_GRANULE + 1)) * 4);
	return true;
}

static inline unsigned gfp_recent_slot(uintptr_t caller)
{
	return (unsigned)((caller * 0x9e3779b97f4a7c15ULL) >> 58);
}

#define GFP_RECENT_IDX_SHIFT 48

/* The index of caller among the thread's recent callers, 0 when it is not
 * there. */
static inline unsigned gfp_recent_idx(uintptr_t caller)
{
	uint64_t k =
	    __atomic_load_n(&gfp_tls.caller.recent[gfp_recent_slot(caller)], __ATOMIC_RELAXED);
	return ((k ^ caller) << (64 - GFP_RECENT_IDX_SHIFT)) == 0
	           ? (unsigned)(k >> GFP_RECENT_IDX_SHIFT)
	           : 0;
}

/* The thread's slot of last callers for entry e: malloc's (C++ new's, the
 * shim's), calloc's, and one for each aligned entry. */
static inline unsigned gfp_last_slot(unsigned e)
{
	return e == GFP_E_calloc           ? 1
	       : e == GFP_E_posix_memalign ? 2
	       : e == GFP_E_aligned_alloc  ? 3
	       : e == GFP_E_memalign       ? 4
	                                   : 0;
}

/* Makes idx, the index of caller, the last of its slot. The caller last,
 * so that a signal handler's route never pairs it with another caller's
 * index. */
static inline void gfp_caller_make_last(unsigned slot, uintptr_t caller, unsigned idx)
{
	struct gfp_caller_cache *sc = &gfp_tls.caller;
	struct gfp_caller_last *l = &sc->last[slot];
	__atomic_store_n(&l->caller, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	l->idx = idx;
	l->c = &sc->counts[idx];
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&l->caller, caller, __ATOMIC_RELAXED);
}

/* The upper half of the map word of a block whose usable size is that of
 * malloc(fit): 0 when the word cannot describe it (8 bytes, which share a
 * word, or over 112 KiB, beyond a size entry), or the tables do not know
 * it. */
static inline uint32_t gfp_size_word(size_t fit)
{
	if (likely(fit - 9 <= GFP_SIZE_TABLE_MAX - 9))
		return gfp_route_map.size[fit];
	if (fit - (GFP_SIZE_TABLE_MAX + 1) <= GFP_SIZE_MID_MAX - (GFP_SIZE_TABLE_MAX + 1))
		return gfp_route_map.size_mid[(fit + 4095) >> 12];
	return 0;
}

/* The upper half of the map word of a block of `usable` bytes (at most
 * GFP_SIZE_MID_MAX). */
static inline uint32_t gfp_size_word_of(size_t usable)
{
	return (uint32_t)((usable >> GFP_GRANULE) | GFP_SHADOW_SIZE) << 16;
}

/* Counts block p, a request of `size` bytes whose map word's upper half is
 * sw, at caller index idx whose counts are c, and writes the word: false
 * when p is outside the routes' chunk (NULL is). The counts and the word
 * are those profile_count writes; the block's live bytes are in the word
 * alone (profile.c walks the map for them). */
static inline __attribute__((always_inline)) bool profile_route_put(void *p, enum gfp_entry e,
                                                                    size_t size, uint32_t sw,
                                                                    unsigned idx,
                                                                    struct gfp_caller_counts *c)
{
	uint32_t *w;
	if (unlikely(!gfp_route_word(p, &w)))
		return false;
	gfp_count(&c->calls, 1);
	gfp_count(&c->bytes, size);
	struct gfp_entry_stats *s = &gfp_tls.stats[e];
	gfp_count(&s->calls, 1);
	gfp_count(&s->bytes, size);
	__atomic_store_n(w, sw | idx, __ATOMIC_RELAXED);
	return true;
}

/* The index and counts of caller, a call of entry e: the last caller of
 * e's slot, or one the thread used lately (loops that alternate between a
 * few call sites are served here); false when profile.c must look it up. A
 * caller met twice in a row among the recent becomes its slot's last: the
 * loop moved on. */
static inline __attribute__((always_inline)) bool profile_route_caller(enum gfp_entry e,
                                                                       uintptr_t caller,
                                                                       unsigned *idx,
                                                                       struct gfp_caller_counts **c)
{
	struct gfp_caller_cache *sc = &gfp_tls.caller;
	const struct gfp_caller_last *l = &sc->last[gfp_last_slot(e)];
	if (likely(caller == l->caller)) {
		*idx = l->idx;
		*c = l->c;
		return true;
	}
	unsigned i = gfp_recent_idx(caller);
	if (unlikely(!i))
		return false;
	*idx = i;
	*c = &sc->counts[i];
	if (sc->missed == caller)
		gfp_caller_make_last(gfp_last_slot(e), caller, i);
	sc->missed = caller;
	return true;
}

/* profile_route_put at the caller's index, for a block whose usable size
 * is that of malloc(fit): false when the caller is not at hand
 * (profile_route_caller), `fit` is outside 9..GFP_SIZE_TABLE_MAX, or p is
 * outside the routes' chunk (or NULL): the route's miss path looks further. */
static inline __attribute__((always_inline)) bool
profile_route_count(void *p, enum gfp_entry e, size_t size, size_t fit, uintptr_t caller)
{
	unsigned idx;
	struct gfp_caller_counts *c;
	if (unlikely(!profile_route_caller(e, caller, &idx, &c) ||
	             fit - 9 > GFP_SIZE_TABLE_MAX - 9))
		return false;
	return profile_route_put(p, e, size, gfp_route_map.size[fit], idx, c);
}

/* Gives the chunk of p a leaf and the routes' entry (its leaf mapped if it
 * has none yet): false when the thread does not count, no leaf can be
 * mapped or another chunk holds the entry. */
bool profile_route_rechunk(void *p);

/* profile_route_free for a block in a chunk the routes have no leaf of. */
bool profile_route_free_other(void *p);

/* Takes block p out of the map before jemalloc frees it: false when the
 * word does not describe it (p is NULL, an 8-byte or large block, one not
 * counted, one in a chunk the routes have no leaf of). While anyone waits
 * for memory free's route is the shim's, which wakes them. */
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
