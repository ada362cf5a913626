/*
 * routes.c - the route families: the functions that serve malloc, free and
 * their kin when meaning.c finds that the policy needs less than the shim's
 * whole path (src/meaning.h says which family serves which policy).
 *
 * Every family is right for the policies meaning.c gives it to, and
 * hands what it cannot serve (an argument glibc answers otherwise than
 * jemalloc, a thread the policy does not count as plain, a failure) to the
 * shim's own functions in malloc.c. A family never loads more than the one
 * thread-local word, the table and jemalloc's function it needs.
 *
 * memalign and aligned_alloc differ from jemalloc's for an alignment that is
 * not a power of two (glibc 2.36 rounds it up), and realloc in errno: their
 * direct routes take the common case and hand the rest to the shim's, which
 * does as jemalloc does in a process with no policy.
 */
#include <errno.h>

#include "profile.h"
#include "internal.h"
#include "fastpath.h"
#include "routes.h"

/* What the exports jump through: the shim's until route_start points it
 * elsewhere (the calls before the constructor, ld.so's among them). */
struct gfp_routes gfp_routes = {
    .malloc = shim_malloc,
    .free = shim_free,
    .calloc = shim_calloc,
    .realloc = shim_realloc,
    .posix_memalign = shim_posix_memalign,
    .memalign = shim_memalign,
    .aligned_alloc = shim_aligned_alloc,
};

/* An alignment for which glibc's memalign and aligned_alloc answer as
 * jemalloc's aligned_alloc does: a power of two, at least a pointer's. */
static inline bool glibc_aligns_as_jemalloc(size_t align)
{
	return align >= sizeof(void *) && !(align & (align - 1));
}

static void *direct_memalign(size_t align, size_t n)
{
	if (likely(glibc_aligns_as_jemalloc(align)))
		return gfp_je_aligned_alloc(align, n);
	return shim_memalign(align, n);
}

static void *direct_aligned_alloc(size_t align, size_t n)
{
	if (likely(glibc_aligns_as_jemalloc(align)))
		return gfp_je_aligned_alloc(align, n);
	return shim_aligned_alloc(align, n);
}

static void *direct_realloc(void *old, size_t n)
{
	if (likely(old != NULL && n != 0)) {
		void *p = gfp_je_realloc(old, n);
		if (unlikely(p == NULL))
			errno = ENOMEM;
		return p;
	}
	return shim_realloc(old, n);
}

/* The watched family: jemalloc's own function first,
 * the shim's policy path only when it fails, for the request as the program
 * made it. */
#define CALLER ((uintptr_t)__builtin_return_address(0))

static void *watched_malloc(size_t n)
{
	void *p = gfp_je_malloc(n);
	if (likely(p != NULL))
		return p;
	return fastpath_policy_alloc(GFP_E_malloc, n ? n : 1, 0, 0, CALLER);
}

static void *watched_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n))
		return shim_calloc(nmemb, size);
	void *p = gfp_je_calloc(nmemb, size);
	if (likely(p != NULL))
		return p;
	return fastpath_policy_alloc(GFP_E_calloc, n ? n : 1, MALLOCX_ZERO, 0, CALLER);
}

static void *watched_realloc(void *old, size_t n)
{
	/* With waiters, the policy path: a shrink or move frees, and wakes them. */
	if (unlikely(old == NULL || n == 0 || __atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED)))
		return shim_realloc(old, n);
	void *p = gfp_je_realloc(old, n);
	if (likely(p != NULL))
		return p;
	return fastpath_policy_realloc(GFP_E_realloc, old, n, CALLER);
}

static int watched_posix_memalign(void **memptr, size_t align, size_t n)
{
	int r = gfp_je_posix_memalign(memptr, align, n);
	if (likely(r != ENOMEM))
		return r;
	return posix_memalign_policy(memptr, align, n, CALLER);
}

static inline void *watched_aligned(enum gfp_entry entry, size_t align, size_t n, uintptr_t caller)
{
	void *p = gfp_je_aligned_alloc(align, n);
	if (likely(p != NULL))
		return p;
	return fastpath_policy_alloc(entry, n ? n : 1, MALLOCX_ALIGN(align), align, caller);
}

static void *watched_memalign(size_t align, size_t n)
{
	if (likely(glibc_aligns_as_jemalloc(align)))
		return watched_aligned(GFP_E_memalign, align, n, CALLER);
	return shim_memalign(align, n);
}

static void *watched_aligned_alloc(size_t align, size_t n)
{
	if (likely(glibc_aligns_as_jemalloc(align)))
		return watched_aligned(GFP_E_aligned_alloc, align, n, CALLER);
	return shim_aligned_alloc(align, n);
}

/* The counted family (stats=totals alone): jemalloc's own
 * function, then the thread's counters (gfp_tls.stats), as the policy path counts them (the
 * size it saw, a failure by the policy path itself). A thread the policy
 * does not count as plain (new, inside the shim, past its exit) takes the
 * shim's route. */
static inline bool thread_counts(void)
{
	return gfp_tls.thread && fastpath_plain_thread();
}

/* thread_counts for the sized and free routes, in one compare: a policy
 * thread outside the shim. Its counts are its thread's (an unregistered
 * thread's are read by nobody, as the shim's path does not count them); a
 * shrinker's calls (in_reclaim) are counted by the shim's path just the
 * same. */
static inline bool thread_counts_plain(void)
{
	return gfp_tls.mode == GFP_TLS_POLICY && !gfp_tls.guard;
}

static inline void *counted(enum gfp_entry e, void *p, size_t size, int flags, size_t align,
                            uintptr_t caller)
{
	if (unlikely(p == NULL))
		return fastpath_policy_alloc(e, size, flags, align, caller);
	gfp_count(&gfp_tls.stats[e].calls, 1);
	gfp_count(&gfp_tls.stats[e].bytes, size);
	return p;
}

static void *counted_malloc(size_t n)
{
	bool counts = thread_counts();
	if (unlikely(!counts))
		return shim_malloc(n);
	return counted(GFP_E_malloc, gfp_je_malloc(n), n ? n : 1, 0, 0, CALLER);
}

static void *counted_calloc(size_t nmemb, size_t size)
{
	bool counts = thread_counts();
	size_t n;
	if (unlikely(!counts || __builtin_mul_overflow(nmemb, size, &n)))
		return shim_calloc(nmemb, size);
	return counted(GFP_E_calloc, gfp_je_calloc(nmemb, size), n ? n : 1, MALLOCX_ZERO, 0,
	               CALLER);
}

static void *counted_realloc(void *old, size_t n)
{
	bool counts = thread_counts();
	if (unlikely(!counts || old == NULL || n == 0 ||
	             __atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED)))
		return shim_realloc(old, n);
	void *p = gfp_je_realloc(old, n);
	if (unlikely(p == NULL))
		return fastpath_policy_realloc(GFP_E_realloc, old, n, CALLER);
	gfp_count(&gfp_tls.stats[GFP_E_realloc].calls, 1);
	gfp_count(&gfp_tls.stats[GFP_E_realloc].bytes, n);
	return p;
}

static int counted_posix_memalign(void **memptr, size_t align, size_t n)
{
	bool counts = thread_counts();
	if (unlikely(!counts))
		return shim_posix_memalign(memptr, align, n);
	int r = gfp_je_posix_memalign(memptr, align, n);
	if (likely(r == 0)) {
		gfp_count(&gfp_tls.stats[GFP_E_posix_memalign].calls, 1);
		gfp_count(&gfp_tls.stats[GFP_E_posix_memalign].bytes, n ? n : 1);
	} else if (r == ENOMEM) {
		r = posix_memalign_policy(memptr, align, n, CALLER);
	}
	return r; /* EINVAL: not a request the policy path counts either */
}

static void *counted_memalign(size_t align, size_t n)
{
	bool counts = thread_counts();
	if (unlikely(!counts || !glibc_aligns_as_jemalloc(align)))
		return shim_memalign(align, n);
	return counted(GFP_E_memalign, gfp_je_aligned_alloc(align, n), n ? n : 1,
	               MALLOCX_ALIGN(align), align, CALLER);
}

static void *counted_aligned_alloc(size_t align, size_t n)
{
	bool counts = thread_counts();
	if (unlikely(!counts || !glibc_aligns_as_jemalloc(align)))
		return shim_aligned_alloc(align, n);
	return counted(GFP_E_aligned_alloc, gfp_je_aligned_alloc(align, n), n ? n : 1,
	               MALLOCX_ALIGN(align), align, CALLER);
}

/* While anyone waits for memory (a gfp_malloc with flags in the slow
 * path) free's route is the shim's, which wakes them (route.c). Every free
 * is counted in its thread's block, as the shim's path counts it: the
 * counts of a thread that is not registered (yet), or is past its exit, are
 * read by nobody, and the shim's own code frees nothing of the program's
 * (a signal handler that frees inside it is the program's). */
static void counted_free(void *p)
{
	gfp_count(&gfp_tls.stats[GFP_E_free].calls, 1);
	gfp_je_free(p);
}

/* The sized families, which route.c installs for the watched and counted
 * ones where jemalloc cannot fail a small request (no limit on the address
 * space or the data segment, overcommit allowed, no mmap of jemalloc's
 * failed yet: as for the budget family's inner routes): a request of
 * GFP_ROUTE_SURE bytes or less goes to jemalloc's own function by a jump,
 * its answer unseen; a larger one (or 0 bytes) to the watched or counted
 * route, which looks at it. */
static inline bool sure(size_t n)
{
	return n - 1 < GFP_ROUTE_SURE;
}

static void *sized_malloc(size_t n)
{
	if (likely(n <= GFP_ROUTE_SURE)) /* malloc(0) cannot fail either */
		return gfp_je_malloc(n);
	return watched_malloc(n);
}

static void *sized_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (likely(!__builtin_mul_overflow(nmemb, size, &n) && sure(n)))
		return gfp_je_calloc(nmemb, size);
	return watched_calloc(nmemb, size);
}

static void *sized_realloc(void *old, size_t n)
{
	if (likely(old != NULL && sure(n) && !__atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED)))
		return gfp_je_realloc(old, n);
	return watched_realloc(old, n);
}

/* An aligned request jemalloc cannot fail: alignment and size at most
 * GFP_ROUTE_SURE, in one compare. */
static inline bool aligned_sure(size_t align, size_t n)
{
	return (align | n) <= GFP_ROUTE_SURE;
}

static int sized_posix_memalign(void **memptr, size_t align, size_t n)
{
	if (likely(aligned_sure(align, n))) /* jemalloc refuses a bad alignment itself */
		return gfp_je_posix_memalign(memptr, align, n);
	return watched_posix_memalign(memptr, align, n);
}

static void *sized_memalign(size_t align, size_t n)
{
	if (likely(glibc_aligns_as_jemalloc(align) && aligned_sure(align, n)))
		return gfp_je_aligned_alloc(align, n);
	return watched_memalign(align, n);
}

static void *sized_aligned_alloc(size_t align, size_t n)
{
	if (likely(glibc_aligns_as_jemalloc(align) && aligned_sure(align, n)))
		return gfp_je_aligned_alloc(align, n);
	return watched_aligned_alloc(align, n);
}

/* stats=totals: the call counted first, then the jump. */
#define COUNTED_SURE(e, n)                                                                         \
	do {                                                                                       \
		gfp_count(&gfp_tls.stats[e].calls, 1);                                             \
		gfp_count(&gfp_tls.stats[e].bytes, n);                                             \
	} while (0)

static void *counted_sized_malloc(size_t n)
{
	if (unlikely(!thread_counts_plain() || !sure(n)))
		return counted_malloc(n);
	COUNTED_SURE(GFP_E_malloc, n);
	return gfp_je_malloc(n);
}

static void *counted_sized_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (unlikely(!thread_counts_plain() || __builtin_mul_overflow(nmemb, size, &n) || !sure(n)))
		return counted_calloc(nmemb, size);
	COUNTED_SURE(GFP_E_calloc, n);
	return gfp_je_calloc(nmemb, size);
}

static void *counted_sized_realloc(void *old, size_t n)
{
	if (unlikely(!thread_counts_plain() || old == NULL || !sure(n) ||
	             __atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED)))
		return counted_realloc(old, n);
	COUNTED_SURE(GFP_E_realloc, n);
	return gfp_je_realloc(old, n);
}

static int counted_sized_posix_memalign(void **memptr, size_t align, size_t n)
{
	/* EINVAL is counted nowhere: a bad alignment takes the other way */
	if (unlikely(!thread_counts_plain() || !glibc_aligns_as_jemalloc(align) ||
	             !aligned_sure(align, n) || !n))
		return counted_posix_memalign(memptr, align, n);
	COUNTED_SURE(GFP_E_posix_memalign, n);
	return gfp_je_posix_memalign(memptr, align, n);
}

static void *counted_sized_memalign(size_t align, size_t n)
{
	if (unlikely(!thread_counts_plain() || !glibc_aligns_as_jemalloc(align) ||
	             !aligned_sure(align, n) || !n))
		return counted_memalign(align, n);
	COUNTED_SURE(GFP_E_memalign, n);
	return gfp_je_aligned_alloc(align, n);
}

static void *counted_sized_aligned_alloc(size_t align, size_t n)
{
	if (unlikely(!thread_counts_plain() || !glibc_aligns_as_jemalloc(align) ||
	             !aligned_sure(align, n) || !n))
		return counted_aligned_alloc(align, n);
	COUNTED_SURE(GFP_E_aligned_alloc, n);
	return gfp_je_aligned_alloc(align, n);
}

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

/* The budget family: the request's charge from the
 * thread's allowance, then on to gfp_routes_inner; the shim's policy path when
 * the allowance runs out. The charge is budget_charge's formula without its
 * saturation: a size that wraps it cannot be served (gfp_allowance_take).
 *
 * gfp_routes_inner is jemalloc's own functions (the direct routes) where
 * jemalloc cannot fail a request that an allowance covers (a batch, 256 KiB
 * at most): then nothing needs its answer, and the route is a jump. Where it
 * can (route.c: a limit on the address space or the data
 * segment, strict overcommit), and for good after a setrlimit that sets such
 * a limit or a failed mmap inside jemalloc (oscalls.c), it is the watched
 * routes, so that a real failure meets the slow path. */
struct gfp_routes gfp_routes_inner;

static void *budget_malloc(size_t n)
{
	if (likely(gfp_allowance_take(GFP_CHARGE(n))))
		return gfp_routes_inner.malloc(n);
	return fastpath_policy_alloc(GFP_E_malloc, n ? n : 1, 0, 0, CALLER);
}

static void *budget_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (likely(!__builtin_mul_overflow(nmemb, size, &n) && gfp_allowance_take(GFP_CHARGE(n))))
		return gfp_routes_inner.calloc(nmemb, size);
	return shim_calloc(nmemb, size);
}

static void *budget_realloc(void *old, size_t n)
{
	/* With waiters, the shim's: a shrink or a move frees, and wakes them. */
	if (likely(!__atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED) &&
	           gfp_allowance_take(GFP_CHARGE(n))))
		return gfp_routes_inner.realloc(old, n);
	return shim_realloc(old, n);
}

static int budget_posix_memalign(void **memptr, size_t align, size_t n)
{
	if (likely(gfp_allowance_take(GFP_CHARGE(n + align))))
		return gfp_routes_inner.posix_memalign(memptr, align, n);
	return shim_posix_memalign(memptr, align, n);
}

static void *budget_memalign(size_t align, size_t n)
{
	if (likely(gfp_allowance_take(GFP_CHARGE(n + align))))
		return gfp_routes_inner.memalign(align, n);
	return shim_memalign(align, n);
}

static void *budget_aligned_alloc(size_t align, size_t n)
{
	if (likely(gfp_allowance_take(GFP_CHARGE(n + align))))
		return gfp_routes_inner.aligned_alloc(align, n);
	return shim_aligned_alloc(align, n);
}

/* Called once init_ensure has read the policy: the families as tables, built
 * here as gfp_je_* are known only once backend_init has run. */
void routes_start(void)
{
	const struct gfp_routes families[ROUTE_KINDS] = {
	    [ROUTE_SHIM] = {shim_malloc, shim_free, shim_calloc, shim_realloc, shim_posix_memalign,
	                    shim_memalign, shim_aligned_alloc},
	    [ROUTE_DIRECT] = {gfp_je_malloc, gfp_je_free, gfp_je_calloc, direct_realloc,
	                      gfp_je_posix_memalign, direct_memalign, direct_aligned_alloc},
	    [ROUTE_WATCHED] = {watched_malloc, gfp_je_free, watched_calloc, watched_realloc,
	                       watched_posix_memalign, watched_memalign, watched_aligned_alloc},
	    [ROUTE_COUNTED] = {counted_malloc, counted_free, counted_calloc, counted_realloc,
	                       counted_posix_memalign, counted_memalign, counted_aligned_alloc},
	    [ROUTE_PROFILED] = {profiled_malloc, profiled_free, profiled_calloc, profiled_realloc,
	                        profiled_posix_memalign, profiled_memalign, profiled_aligned_alloc},
	    [ROUTE_BUDGET] = {budget_malloc, gfp_je_free, budget_calloc, budget_realloc,
	                      budget_posix_memalign, budget_memalign, budget_aligned_alloc},
	};
	const struct gfp_routes sized[ROUTE_SIZED_KINDS] = {
	    [ROUTE_SIZED_WATCHED] = {sized_malloc, gfp_je_free, sized_calloc, sized_realloc,
	                             sized_posix_memalign, sized_memalign, sized_aligned_alloc},
	    [ROUTE_SIZED_COUNTED] = {counted_sized_malloc, counted_free, counted_sized_calloc,
	                             counted_sized_realloc, counted_sized_posix_memalign,
	                             counted_sized_memalign, counted_sized_aligned_alloc},
	};
	route_sized(sized);
	route_start(&gfp_routes, &gfp_routes_inner, families);
}
