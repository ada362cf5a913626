/*
 * profile.h - stats=sites in the profiled routes (preload/malloc.c): a block
 * jemalloc just returned is counted, and a freed one taken out, in line,
 * when the thread's last call site and the shadow map's one-word form cover
 * the call. Whatever they do not cover goes through the shim to profile.c,
 * which owns the map and the sites and keeps the same rules.
 *
 * The map's layout (profile.c): a 16-bit entry per 8-byte granule, in
 * leaves of a 2 MiB chunk each, which the thread's cache in gfp_tls.site
 * finds without a lock. A
 * block's first granule holds its site entry (the site's index, TINY for an
 * 8-byte block); a block of 16 bytes to 128 KiB, which jemalloc always
 * starts on a 16-byte boundary, has its size entry (its usable size in
 * granules, and SIZE) in the second. So such a block's two entries are one
 * aligned 32-bit word (the word of p >> 4), and its sign bit is set exactly
 * when the word describes a block that starts at p and has a size entry:
 * a site entry never has bit 15.
 */
#ifndef GFP_PROFILE_H
#define GFP_PROFILE_H

#include "internal.h"

#define GFP_SHADOW_TINY 0x4000u /* a site entry: usable size 8 */
#define GFP_SHADOW_SIZE 0x8000u /* a size entry: granules below */
#define GFP_SHADOW_MASK 0x3fffu /* a site's index, or a size in granules */

/* The largest request whose usable size gfp_site_granules gives: jemalloc's
 * largest small size class with 4 KiB pages. An aligned request's usable
 * size is that of its size rounded up to its alignment (jemalloc's
 * sz_sa2u) while the rounded size stays within it and the alignment within
 * a page. */
#define GFP_SITE_TABLE_MAX 14336

#define GFP_CHUNK_SHIFT 21
#define GFP_GRANULE     3

/* Usable size in granules of malloc(n), for n up to GFP_SITE_TABLE_MAX. */
extern uint16_t gfp_site_granules[GFP_SITE_TABLE_MAX + 1];

/* The thread's cache entry for the chunk of address a. */
static inline struct gfp_leaf_ref *gfp_leaf_ref(uintptr_t a)
{
	uintptr_t chunk = (a >> GFP_CHUNK_SHIFT) + 1;
	return &gfp_tls.site
	            .leaves[chunk % (sizeof(gfp_tls.site.leaves) / sizeof(gfp_tls.site.leaves[0]))];
}

/* The map's 32-bit word for the 16 bytes at p in `leaf`. */
static inline uint32_t *gfp_shadow_word(uint16_t *leaf, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	return (uint32_t *)leaf + ((a & ((1u << GFP_CHUNK_SHIFT) - 1)) >> (GFP_GRANULE + 1));
}

/* Whether p is in the chunk of the routes' leaf. */
static inline bool gfp_route_has(const void *p)
{
	return gfp_tls.site.chunk == (uintptr_t)p >> GFP_CHUNK_SHIFT;
}

/* Makes caller's site the thread's last when the thread has seen it lately
 * (profile.c); false when profile.c must look it up. */
bool profile_route_switch(uintptr_t caller);

/* Counts a request of `size` bytes, whose usable size is that of
 * malloc(fit), at the thread's last site, before jemalloc is asked, and
 * gives the map word for its block in *word: false when the call is not
 * that site's or `fit` is outside 9..GFP_SITE_TABLE_MAX (8-byte blocks share
 * a word): the route asks profile_route_switch, or profile.c counts it. The counts and the word are
 * those profile_count writes. */
static inline bool profile_route_count(enum gfp_entry e, size_t size, size_t fit, uintptr_t caller,
                                       uint32_t *word)
{
	struct gfp_site_cache *sc = &gfp_tls.site;
	if (unlikely(caller != sc->caller || fit - 9 > GFP_SITE_TABLE_MAX - 9))
		return false;
	uint32_t granules = gfp_site_granules[fit];
	struct gfp_site_counts *c = sc->last;
	gfp_count(&c->calls, 1);
	gfp_count(&c->bytes, size);
	gfp_add(&c->live_bytes, (int64_t)granules << GFP_GRANULE);
	gfp_add(&c->live_calls, 1);
	struct gfp_entry_stats *s = &gfp_tls.thread->stats[e];
	gfp_count(&s->calls, 1);
	gfp_count(&s->bytes, size);
	*word = sc->idx | (granules | GFP_SHADOW_SIZE) << 16;
	return true;
}

/* jemalloc failed the request profile_route_count counted: the counts
 * are taken back, for the shim's policy path to count it as it ends. */
void profile_route_uncount(enum gfp_entry e, size_t size, uint32_t word);
/* Writes `word` for block p when the routes' leaf is another chunk's. */
void profile_route_map(void *p, uint32_t word);

static inline void profile_route_store(void *p, uint32_t word)
{
	if (likely(gfp_route_has(p)))
		__atomic_store_n(gfp_shadow_word(gfp_tls.site.leaf, p), word, __ATOMIC_RELAXED);
	else
		profile_route_map(p, word);
}

/* profile_route_free for a block outside the routes' chunk. */
bool profile_route_free_other(void *p);

/* Takes block p out of the map and its bytes off its site, before jemalloc
 * frees it: false when the word does not describe it (p is NULL, an 8-byte
 * or large block, one not counted, one outside the routes' chunk) or the
 * thread does not count (its routes' leaf is then none). While anyone waits
 * for memory free's route is the shim's, which wakes them. */
static inline bool profile_route_free(void *p)
{
	if (unlikely(!gfp_route_has(p)))
		return false;
	uint32_t *w = gfp_shadow_word(gfp_tls.site.leaf, p);
	uint32_t v = __atomic_load_n(w, __ATOMIC_RELAXED);
	if (unlikely((int32_t)v >= 0))
		return false;
	__atomic_store_n(w, 0, __ATOMIC_RELAXED);
	struct gfp_site_counts *c = &gfp_tls.site.counts[v & GFP_SHADOW_MASK];
	gfp_sub(&c->live_bytes, (int64_t)((v >> 13) & (GFP_SHADOW_MASK << GFP_GRANULE)));
	gfp_sub(&c->live_calls, 1);
	gfp_count(&gfp_tls.thread->stats[GFP_E_free].calls, 1);
	return true;
}

#endif /* GFP_PROFILE_H */
