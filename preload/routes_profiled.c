/*
 * routes_profiled.c - the profiled family (stats=sites alone): malloc and
 * its kin counted per call site in line, through the shadow map profile.h
 * reads and writes; everything the line cannot count goes to profile.c or
 * to the shim's own functions (shim.c).
 */
#include <errno.h>

#include "profile.h"
#include "internal.h"
#include "fastpath.h"
#include "routes_profiled.h"
#include "shim.h"

/* The profiled family (stats=sites alone): jemalloc's own
 * function, then the block counted at the thread's last caller and its
 * map entry written, in line (profile.h); profile.c through
 * fastpath_profiled for a block the line cannot count, the shim's policy
 * path for a request jemalloc fails. A free takes its block out of the map
 * in line, or goes the shim's way. */

/* jemalloc's function of entry e (malloc, calloc, or an aligned one), as
 * the route's arguments a and b ask it. */
static inline __attribute__((always_inline)) void *je_alloc(enum gfp_entry e, size_t a, size_t b)
{
	return e == GFP_E_malloc || e == GFP_E_realloc ? gfp_je_malloc(a)
	       : e == GFP_E_calloc                     ? gfp_je_calloc(a, b)
	                                               : gfp_je_aligned_alloc(a, b);
}

/* The mallocx flags of a profiled route's request. */
static inline int profiled_flags(enum gfp_entry e, size_t align)
{
	return e == GFP_E_calloc ? MALLOCX_ZERO : align ? MALLOCX_ALIGN(align) : 0;
}

/* profiled_miss's rarest cases: a block in a chunk the routes have no leaf
 * of gets one, and the route counts it; any other, profile.c counts. */
static __attribute__((noinline)) void *profiled_general(void *p, enum gfp_entry e, size_t n,
                                                        size_t fit, size_t align, uintptr_t caller)
{
	uint32_t sw = gfp_size_word(fit);
	unsigned idx;
	struct gfp_caller_counts *c;
	if (sw && profile_route_caller(e, caller, &idx, &c) && profile_route_rechunk(p) &&
	    profile_route_put(p, e, n, sw, idx, c))
		return p;
	return fastpath_profiled(p, e, n, profiled_flags(e, align), align, caller);
}

/* A block the route could not count in line: jemalloc failed (the shim's
 * policy path), the caller is not the last (one used lately counts here),
 * or its size is beyond the small table. */
static __attribute__((noinline)) void *profiled_miss(void *p, enum gfp_entry e, size_t n,
                                                     size_t fit, size_t align, uintptr_t caller)
{
	if (unlikely(p == NULL))
		return fastpath_policy_alloc(e, n ? n : 1, profiled_flags(e, align), align, caller);
	uint32_t sw = gfp_size_word(fit);
	unsigned idx;
	struct gfp_caller_counts *c;
	if (likely(sw && profile_route_caller(e, caller, &idx, &c) &&
	           profile_route_put(p, e, n, sw, idx, c)))
		return p;
	return profiled_general(p, e, n, fit, align, caller);
}

/* An aligned block's usable size is malloc's of its size rounded up to the
 * alignment, within a page (profile.h); else a size no table covers. */
static inline size_t aligned_fit(size_t align, size_t n)
{
	return align <= 4096 ? (n + align - 1) & ~(align - 1) : SIZE_MAX;
}

/* The route's request to jemalloc, then counted: the shim's policy path if
 * jemalloc fails it (NULL is in no chunk: the miss path sees it). Always
 * inlined into the route itself, so that CALLER is the program's; the
 * caller and the block's fit are worked out only after jemalloc's call, so
 * that nothing is kept across it. `align` is 0 for malloc's alignment. */
static inline __attribute__((always_inline)) void *profiled_call(enum gfp_entry e, size_t a,
                                                                 size_t b, size_t n, size_t align)
{
	void *p = je_alloc(e, a, b);
	size_t fit = align ? aligned_fit(align, n) : n;
	if (unlikely(!profile_route_count(p, e, n, fit, CALLER)))
		return profiled_miss(p, e, n, fit, align, CALLER);
	return p;
}

static void *profiled_malloc(size_t n)
{
	return profiled_call(GFP_E_malloc, n, 0, n, 0);
}

static void *profiled_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (unlikely(__builtin_mul_overflow(nmemb, size, &n)))
		return shim_calloc(nmemb, size);
	return profiled_call(GFP_E_calloc, nmemb, size, n, 0);
}

/* posix_memalign's miss, as a tail call: its route keeps no answer across
 * it. */
static __attribute__((noinline)) int profiled_posix_memalign_miss(void *p, size_t n, size_t fit,
                                                                  size_t align, uintptr_t caller)
{
	profiled_miss(p, GFP_E_posix_memalign, n, fit, align, caller);
	return 0;
}

static int profiled_posix_memalign(void **memptr, size_t align, size_t n)
{
	int r = gfp_je_posix_memalign(memptr, align, n);
	/* EINVAL, jemalloc's check of the alignment, is counted nowhere. */
	if (unlikely(r != 0))
		return r == ENOMEM ? posix_memalign_policy(memptr, align, n, CALLER) : r;
	void *p = *memptr;
	size_t fit = aligned_fit(align, n);
	if (unlikely(!profile_route_count(p, GFP_E_posix_memalign, n, fit, CALLER)))
		return profiled_posix_memalign_miss(p, n, fit, align, CALLER);
	return 0;
}

/* Inlined into its two callers: CALLER is theirs. */
static inline __attribute__((always_inline)) void *profiled_aligned(enum gfp_entry e, size_t align,
                                                                    size_t n)
{
	return profiled_call(e, align, n, n, align);
}

static void *profiled_memalign(size_t align, size_t n)
{
	if (likely(glibc_aligns_as_jemalloc(align)))
		return profiled_aligned(GFP_E_memalign, align, n);
	return shim_memalign(align, n);
}

static void *profiled_aligned_alloc(size_t align, size_t n)
{
	if (likely(glibc_aligns_as_jemalloc(align)))
		return profiled_aligned(GFP_E_aligned_alloc, align, n);
	return shim_aligned_alloc(align, n);
}

/* jemalloc failed the realloc: the old block is still its caller's, in
 * the map as it was, and the shim's policy path takes the request. */
static __attribute__((noinline)) void *profiled_realloc_failed(void *old, size_t n, uint32_t *w,
                                                               uint32_t v, uintptr_t caller)
{
	__atomic_store_n(w, v, __ATOMIC_RELAXED);
	return fastpath_policy_realloc(GFP_E_realloc, old, n, caller);
}

/* A realloc's new block beyond the small sizes: its usable size is
 * jemalloc's (a large block resized in place may keep more). */
static __attribute__((noinline)) void *profiled_realloc_large(void *p, size_t n, uintptr_t caller)
{
	size_t usable = sallocx(p, 0);
	unsigned idx;
	struct gfp_caller_counts *c;
	if (usable <= GFP_SIZE_MID_MAX && profile_route_caller(GFP_E_realloc, caller, &idx, &c) &&
	    profile_route_put(p, GFP_E_realloc, n, gfp_size_word_of(usable), idx, c))
		return p;
	return fastpath_profiled(p, GFP_E_realloc, n, 0, 0, caller);
}

/* A realloc to up to 112 KiB of a block the map word describes: the old
 * block leaves the map before jemalloc may hand its address to another
 * thread (once it has moved), and the new one is counted at the realloc's
 * caller, as profile.c counts it; a small one's usable size is the table's
 * (a small block jemalloc keeps in place is already of the new size's
 * class). Any other realloc is the shim's, and so is every one while anyone
 * waits for memory (a shrink or a move frees, and wakes them). */
static void *profiled_realloc(void *old, size_t n)
{
	if (unlikely(old == NULL))
		return profiled_call(GFP_E_realloc, n, 0, n, 0);
	uint32_t *w, v;
	if (unlikely(n - 9 > GFP_SIZE_MID_MAX - 9 || !gfp_route_word(old, &w) ||
	             (int32_t)(v = __atomic_load_n(w, __ATOMIC_RELAXED)) >= 0 ||
	             __atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED)))
		return shim_realloc(old, n);
	__atomic_store_n(w, 0, __ATOMIC_RELAXED);
	void *p = gfp_je_realloc(old, n);
	if (unlikely(p == NULL))
		return profiled_realloc_failed(old, n, w, v, CALLER);
	if (unlikely(n > GFP_SIZE_TABLE_MAX))
		return profiled_realloc_large(p, n, CALLER);
	if (unlikely(!profile_route_count(p, GFP_E_realloc, n, n, CALLER)))
		return profiled_miss(p, GFP_E_realloc, n, n, 0, CALLER);
	return p;
}

/* A block in a chunk the routes have no leaf of: profile.c finds it in the
 * map; else the shim's free. */
static __attribute__((noinline)) void profiled_free_other(void *p)
{
	if (profile_route_free_other(p))
		gfp_je_free(p);
	else
		shim_free(p);
}

static void profiled_free(void *p)
{
	if (likely(profile_route_free(p)))
		gfp_je_free(p);
	else
		profiled_free_other(p);
}

void routes_profiled(struct gfp_routes *family)
{
	*family = (struct gfp_routes){
	    profiled_malloc,         profiled_free,     profiled_calloc,       profiled_realloc,
	    profiled_posix_memalign, profiled_memalign, profiled_aligned_alloc};
}
