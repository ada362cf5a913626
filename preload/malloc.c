/*
 * malloc.c - the C allocation entry points libgfpshim.so exports.
 *
 * Each one checks the arguments the way glibc 2.36 does and hands the
 * request (entry, size, jemalloc flags, alignment) to the fast path, or, for
 * malloc and its kin, jumps through a route that may skip the shim (the
 * Routes section below). Programs were
 * written against glibc, so its answers are the contract: errno ENOMEM,
 * posix_memalign leaves *memptr and errno alone on failure, realloc(p, 0)
 * frees and returns NULL, free keeps errno, memalign rounds a non-power-of-two
 * alignment up.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include "fastpath.h"
#include "profile.h"

#define EXPORT __attribute__((visibility("default")))

static inline size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static void *shim_malloc(size_t n)
{
	return gfp_fastpath_alloc(GFP_E_malloc, n, 0, 0);
}

static void shim_free(void *p)
{
	gfp_fastpath_free(GFP_E_free, p, 0, 0);
}

static void *shim_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return gfp_fastpath_alloc(GFP_E_calloc, n, MALLOCX_ZERO, 0);
}

static inline void *do_realloc(enum gfp_entry entry, void *old, size_t n)
{
	if (old == NULL)
		return gfp_fastpath_alloc(entry, n, 0, 0);
	if (n == 0) { /* glibc: REALLOC_ZERO_BYTES_FREES */
		gfp_fastpath_free(entry, old, 0, 0);
		return NULL;
	}
	return gfp_fastpath_realloc(entry, old, n);
}

/* noinline: also the fallback of direct_realloc, whose common case should
 * not pay for this one's frame. */
static __attribute__((noinline)) void *shim_realloc(void *old, size_t n)
{
	return do_realloc(GFP_E_realloc, old, n);
}

EXPORT void *reallocarray(void *old, size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(GFP_E_reallocarray, old, n);
}

/* glibc's _mid_memalign: small alignments are malloc's, huge ones EINVAL,
 * others rounded up to a power of two. */
static inline void *do_memalign(enum gfp_entry entry, size_t align, size_t n)
{
	if (unlikely(align > SIZE_MAX / 2 + 1)) {
		errno = EINVAL;
		return NULL;
	}
	if (unlikely(align & (align - 1)))
		align = (size_t)1 << (64 - __builtin_clzll(align));
	if (unlikely(align < sizeof(void *)))
		align = sizeof(void *);
	return gfp_fastpath_aligned(entry, align, n);
}

/* noinline: also the fallback of direct_memalign, which stays frameless. */
static __attribute__((noinline)) void *shim_memalign(size_t align, size_t n)
{
	return do_memalign(GFP_E_memalign, align, n);
}

/* glibc before 2.38 treats aligned_alloc exactly like memalign. noinline:
 * also the fallback of direct_aligned_alloc. */
static __attribute__((noinline)) void *shim_aligned_alloc(size_t align, size_t n)
{
	return do_memalign(GFP_E_aligned_alloc, align, n);
}

EXPORT void *valloc(size_t n)
{
	return do_memalign(GFP_E_valloc, page_size(), n);
}

EXPORT void *pvalloc(size_t n)
{
	size_t ps = page_size(), rounded;
	if (__builtin_add_overflow(n, ps - 1, &rounded)) {
		errno = ENOMEM;
		return NULL;
	}
	rounded &= ~(ps - 1);
	return do_memalign(GFP_E_pvalloc, ps, rounded); /* pvalloc(0): glibc's minimum */
}

/* The countdown is spent: straight to the engine. Out of line, so that the
 * idle path below saves no more registers than it uses. */
static __attribute__((noinline)) int posix_memalign_policy(void **memptr, size_t align, size_t n,
                                                           uintptr_t caller)
{
	if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0 || align == 0)
		return EINVAL;
	int saved = errno;
	void *p =
	    gfp_alloc_policy(GFP_E_posix_memalign, n ? n : 1, MALLOCX_ALIGN(align), align, caller);
	errno = saved;
	if (!p)
		return ENOMEM;
	*memptr = p;
	return 0;
}

static int shim_posix_memalign(void **memptr, size_t align, size_t n)
{
	if (likely(gfp_countdown_fast())) {
		/* jemalloc's own checks are glibc's (EINVAL, ENOMEM, *memptr left
		 * alone), and a failing mmap inside it keeps errno (oscalls.c). */
		return gfp_je_posix_memalign(memptr, align, n);
	}
	return posix_memalign_policy(memptr, align, n, (uintptr_t)__builtin_return_address(0));
}

/* ------------------------------------------------------------------------
 * Routes: which function serves each hot entry point in this process.
 *
 * Every entry point above is right in every process. Each export is one
 * indirect jump through its route. Once the constructor knows the policy,
 * the routes that no policy can ever need are pointed past the shim: in a
 * process with no policy (and no control socket, through which one could
 * come later) all of them go straight to jemalloc's own functions; with
 * fail.probability alone, which injects on allocations only, free does.
 * Under a policy that only shapes what a failing request does (GFP_RULES,
 * default=, oom=...), allocations are watched: jemalloc's own function
 * first, the shim's policy path only when it fails. Under stats=totals
 * alone, allocations and frees are counted: jemalloc's own function, then
 * the thread's counters. Until then, and in every other process, they are
 * the shim's. A route is one pointer, written
 * once before main: a call racing the write takes the old one, which is
 * right too.
 *
 * memalign and aligned_alloc differ from jemalloc's for an alignment that is
 * not a power of two (glibc 2.36 rounds it up), and realloc in errno: their
 * direct routes take the common case and hand the rest to the shim's, which
 * does as jemalloc does in a process with no policy.
 */

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

/* The watched routes (gfp_route_watch_alloc): jemalloc's own function first,
 * the shim's policy path only when it fails, for the request as the program
 * made it. */
#define CALLER ((uintptr_t)__builtin_return_address(0))

static void *watched_malloc(size_t n)
{
	void *p = gfp_je_malloc(n);
	if (likely(p != NULL))
		return p;
	return gfp_alloc_policy(GFP_E_malloc, n ? n : 1, 0, 0, CALLER);
}

static void *watched_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n))
		return shim_calloc(nmemb, size);
	void *p = gfp_je_calloc(nmemb, size);
	if (likely(p != NULL))
		return p;
	return gfp_alloc_policy(GFP_E_calloc, n ? n : 1, MALLOCX_ZERO, 0, CALLER);
}

static void *watched_realloc(void *old, size_t n)
{
	/* With waiters, the policy path: a shrink or move frees, and wakes them. */
	if (unlikely(old == NULL || n == 0 || __atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED)))
		return shim_realloc(old, n);
	void *p = gfp_je_realloc(old, n);
	if (likely(p != NULL))
		return p;
	return gfp_realloc_policy(GFP_E_realloc, old, n, CALLER);
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
	return gfp_alloc_policy(entry, n ? n : 1, MALLOCX_ALIGN(align), align, caller);
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

/* The counted routes (gfp_route_count: stats=totals alone): jemalloc's own
 * function, then the thread's counters (gfp_tls.stats), as the policy path counts them (the
 * size it saw, a failure by the policy path itself). A thread the policy
 * does not count as plain (new, inside the shim, past its exit) takes the
 * shim's route. */
static inline bool thread_counts(void)
{
	return gfp_tls.thread && gfp_plain_policy_thread();
}

static inline void *counted(enum gfp_entry e, void *p, size_t size, int flags, size_t align,
                            uintptr_t caller)
{
	if (unlikely(p == NULL))
		return gfp_alloc_policy(e, size, flags, align, caller);
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
		return gfp_realloc_policy(GFP_E_realloc, old, n, CALLER);
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

static void counted_free(void *p)
{
	bool counts = thread_counts();
	/* With waiters (a gfp_malloc with flags in the slow path), the shim's
	 * free, which wakes them. */
	if (unlikely(!counts || __atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED))) {
		shim_free(p);
		return;
	}
	gfp_count(&gfp_tls.stats[GFP_E_free].calls, 1);
	gfp_je_free(p);
}

/* The profiled routes (gfp_route_profile: stats=sites alone): jemalloc's own
 * function, then the block counted at the thread's last call site and its
 * map entry written, in line (profile.h); profile.c through
 * gfp_alloc_profiled for a block the line cannot count, the shim's policy
 * path for a request jemalloc fails. A free takes its block out of the map
 * in line, or goes the shim's way. */
/* jemalloc's function of entry e (malloc, calloc, or an aligned one), as
 * the route's arguments a and b ask it. */
static inline __attribute__((always_inline)) void *je_alloc(enum gfp_entry e, size_t a, size_t b)
{
	return e == GFP_E_malloc   ? gfp_je_malloc(a)
	       : e == GFP_E_calloc ? gfp_je_calloc(a, b)
	                           : gfp_je_aligned_alloc(a, b);
}

/* profiled_miss's rarer cases: a block in another chunk makes that the
 * routes' and is counted by the route; any other, profile.c counts. */
static __attribute__((noinline)) void *profiled_general(void *p, enum gfp_entry e, size_t n,
                                                        size_t fit, size_t align, uintptr_t caller)
{
	if (caller == gfp_tls.site.caller && fit - 9 <= GFP_SITE_TABLE_MAX - 9 &&
	    profile_route_rechunk(p) && profile_route_count(p, e, n, fit, caller))
		return p;
	int flags = e == GFP_E_calloc ? MALLOCX_ZERO : align ? MALLOCX_ALIGN(align) : 0;
	return gfp_alloc_profiled(p, e, n, flags, align, caller);
}

/* A block the route could not count in line, most often a call from
 * another site than the last one's: one the thread used lately becomes its
 * last, and the route counts the block. */
static __attribute__((noinline)) void *profiled_miss(void *p, enum gfp_entry e, size_t n,
                                                     size_t fit, size_t align, uintptr_t caller)
{
	if (caller != gfp_tls.site.caller && profile_route_switch(caller) &&
	    profile_route_count(p, e, n, fit, caller))
		return p;
	return profiled_general(p, e, n, fit, align, caller);
}

/* The route's request to jemalloc, then counted: the shim's policy path if
 * jemalloc fails it. Inlined into the route itself, CALLER is the
 * program's. */
#define PROFILED_CALL(e, a, b, n, fit, flags, align)                                               \
	do {                                                                                       \
		void *p_ = je_alloc(e, a, b);                                                      \
		if (unlikely(p_ == NULL))                                                          \
			return gfp_alloc_policy(e, (n) ? (n) : 1, flags, align, CALLER);           \
		if (unlikely(!profile_route_count(p_, e, n, fit, CALLER)))                         \
			return profiled_miss(p_, e, n, fit, align, CALLER);                        \
		return p_;                                                                         \
	} while (0)

static void *profiled_malloc(size_t n)
{
	PROFILED_CALL(GFP_E_malloc, n, 0, n, n, 0, 0);
}

static void *profiled_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (unlikely(__builtin_mul_overflow(nmemb, size, &n)))
		return shim_calloc(nmemb, size);
	PROFILED_CALL(GFP_E_calloc, nmemb, size, n, n, MALLOCX_ZERO, 0);
}

/* An aligned block's usable size is malloc's of its size rounded up to the
 * alignment, within a page (profile.h); else a size no table covers. */
static inline size_t aligned_fit(size_t align, size_t n)
{
	return align <= 4096 ? (n + align - 1) & ~(align - 1) : SIZE_MAX;
}

static int profiled_posix_memalign(void **memptr, size_t align, size_t n)
{
	int r = gfp_je_posix_memalign(memptr, align, n);
	/* EINVAL, jemalloc's check of the alignment, is counted nowhere. */
	if (unlikely(r != 0))
		return r == ENOMEM ? posix_memalign_policy(memptr, align, n, CALLER) : r;
	size_t fit = aligned_fit(align, n);
	if (unlikely(!profile_route_count(*memptr, GFP_E_posix_memalign, n, fit, CALLER)))
		profiled_miss(*memptr, GFP_E_posix_memalign, n, fit, align, CALLER);
	return 0;
}

/* Inlined into its two callers: CALLER is theirs. */
static inline __attribute__((always_inline)) void *profiled_aligned(enum gfp_entry e, size_t align,
                                                                    size_t n)
{
	PROFILED_CALL(e, align, n, n, aligned_fit(align, n), MALLOCX_ALIGN(align), align);
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

/* realloc stays the shim's: profile.c takes a moving block out of the map
 * before jemalloc may hand its address to another thread. */
#define profiled_realloc shim_realloc

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

struct routes {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
};

static struct routes route = {shim_malloc,         shim_free,     shim_calloc,       shim_realloc,
                              shim_posix_memalign, shim_memalign, shim_aligned_alloc};

/* The budget routes (gfp_route_budget): the request's charge from the
 * thread's allowance, then on to budget_inner; the shim's policy path when
 * the allowance runs out. The charge is budget_charge's formula without its
 * saturation: a size that wraps it cannot be served (gfp_allowance_take).
 *
 * budget_inner is jemalloc's own functions (the direct routes) where
 * jemalloc cannot fail a request that an allowance covers (a batch, 256 KiB
 * at most): then nothing needs its answer, and the route is a jump. Where it
 * can (gfp_route_budget_watched: a limit on the address space or the data
 * segment, strict overcommit), and for good after a setrlimit that sets such
 * a limit or a failed mmap inside jemalloc (oscalls.c), it is the watched
 * routes, so that a real failure meets the slow path. */
static struct routes budget_inner;

static void *budget_malloc(size_t n)
{
	if (likely(gfp_allowance_take(GFP_CHARGE(n))))
		return budget_inner.malloc(n);
	return gfp_alloc_policy(GFP_E_malloc, n ? n : 1, 0, 0, CALLER);
}

static void *budget_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (likely(!__builtin_mul_overflow(nmemb, size, &n) && gfp_allowance_take(GFP_CHARGE(n))))
		return budget_inner.calloc(nmemb, size);
	return shim_calloc(nmemb, size);
}

static void *budget_realloc(void *old, size_t n)
{
	/* With waiters, the shim's: a shrink or a move frees, and wakes them. */
	if (likely(!__atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED) &&
	           gfp_allowance_take(GFP_CHARGE(n))))
		return budget_inner.realloc(old, n);
	return shim_realloc(old, n);
}

static int budget_posix_memalign(void **memptr, size_t align, size_t n)
{
	if (likely(gfp_allowance_take(GFP_CHARGE(n + align))))
		return budget_inner.posix_memalign(memptr, align, n);
	return shim_posix_memalign(memptr, align, n);
}

static void *budget_memalign(size_t align, size_t n)
{
	if (likely(gfp_allowance_take(GFP_CHARGE(n + align))))
		return budget_inner.memalign(align, n);
	return shim_memalign(align, n);
}

static void *budget_aligned_alloc(size_t align, size_t n)
{
	if (likely(gfp_allowance_take(GFP_CHARGE(n + align))))
		return budget_inner.aligned_alloc(align, n);
	return shim_aligned_alloc(align, n);
}

EXPORT void *malloc(size_t n)
{
	return route.malloc(n);
}

EXPORT void free(void *p)
{
	route.free(p);
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
	return route.calloc(nmemb, size);
}

EXPORT void *realloc(void *old, size_t n)
{
	return route.realloc(old, n);
}

EXPORT int posix_memalign(void **memptr, size_t align, size_t n)
{
	return route.posix_memalign(memptr, align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
	return route.memalign(align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	return route.aligned_alloc(align, n);
}

/* The tables of allocation routes (free's is set on its own). Functions,
 * as gfp_je_* are known only once backend_init has run. */
static struct routes shim_routes(void)
{
	return (struct routes){.malloc = shim_malloc,
	                       .calloc = shim_calloc,
	                       .realloc = shim_realloc,
	                       .posix_memalign = shim_posix_memalign,
	                       .memalign = shim_memalign,
	                       .aligned_alloc = shim_aligned_alloc};
}

static struct routes direct_routes(void)
{
	return (struct routes){.malloc = gfp_je_malloc,
	                       .calloc = gfp_je_calloc,
	                       .realloc = direct_realloc,
	                       .posix_memalign = gfp_je_posix_memalign,
	                       .memalign = direct_memalign,
	                       .aligned_alloc = direct_aligned_alloc};
}

static struct routes watched_routes(void)
{
	return (struct routes){.malloc = watched_malloc,
	                       .calloc = watched_calloc,
	                       .realloc = watched_realloc,
	                       .posix_memalign = watched_posix_memalign,
	                       .memalign = watched_memalign,
	                       .aligned_alloc = watched_aligned_alloc};
}

static struct routes counted_routes(void)
{
	return (struct routes){.malloc = counted_malloc,
	                       .calloc = counted_calloc,
	                       .realloc = counted_realloc,
	                       .posix_memalign = counted_posix_memalign,
	                       .memalign = counted_memalign,
	                       .aligned_alloc = counted_aligned_alloc};
}

static struct routes profiled_routes(void)
{
	return (struct routes){.malloc = profiled_malloc,
	                       .calloc = profiled_calloc,
	                       .realloc = shim_realloc,
	                       .posix_memalign = profiled_posix_memalign,
	                       .memalign = profiled_memalign,
	                       .aligned_alloc = profiled_aligned_alloc};
}

static struct routes budget_routes(void)
{
	return (struct routes){.malloc = budget_malloc,
	                       .calloc = budget_calloc,
	                       .realloc = budget_realloc,
	                       .posix_memalign = budget_posix_memalign,
	                       .memalign = budget_memalign,
	                       .aligned_alloc = budget_aligned_alloc};
}

/* Every route of `into` but free's. */
static void set_alloc_routes(struct routes *into, const struct routes *r)
{
	__atomic_store_n(&into->malloc, r->malloc, __ATOMIC_RELAXED);
	__atomic_store_n(&into->calloc, r->calloc, __ATOMIC_RELAXED);
	__atomic_store_n(&into->realloc, r->realloc, __ATOMIC_RELAXED);
	__atomic_store_n(&into->posix_memalign, r->posix_memalign, __ATOMIC_RELAXED);
	__atomic_store_n(&into->memalign, r->memalign, __ATOMIC_RELAXED);
	__atomic_store_n(&into->aligned_alloc, r->aligned_alloc, __ATOMIC_RELAXED);
}

static bool jemalloc_may_fail; /* gfp_routes_watch_jemalloc was called */

/* jemalloc may fail a small request from now on: the budget routes watch
 * its answers. A call racing this goes unwatched, as it would have before. */
void gfp_routes_watch_jemalloc(void)
{
	__atomic_store_n(&jemalloc_may_fail, true, __ATOMIC_RELAXED);
	if (__atomic_load_n(&budget_inner.malloc, __ATOMIC_RELAXED)) {
		struct routes w = watched_routes();
		set_alloc_routes(&budget_inner, &w);
	}
}

/* Near the budget's watermark the shim's routes, which see revocations;
 * else the budget routes (budget.c: budget_revoke). */
static void set_budget_routes(bool fast)
{
	struct routes r = fast ? budget_routes() : shim_routes();
	set_alloc_routes(&route, &r);
}

/* Under a budget free is jemalloc's own but while a free must be seen
 * (thread.c: free_route_update). */
static void set_free_route(bool shim)
{
	__atomic_store_n(&route.free, shim ? shim_free : gfp_je_free, __ATOMIC_RELAXED);
}

/* Under stats=sites free is the profiled route but while anyone waits: the
 * shim's free wakes them (thread.c: free_route_update). */
static void set_profiled_free_route(bool shim)
{
	__atomic_store_n(&route.free, shim ? shim_free : profiled_free, __ATOMIC_RELAXED);
}

/* Called once gfp_init has read the policy. */
static void choose_routes(void)
{
	struct routes r = {0};
	if (gfp_route_direct_alloc())
		r = direct_routes();
	else if (gfp_route_watch_alloc())
		r = watched_routes();
	else if (gfp_route_count())
		r = counted_routes();
	else if (gfp_route_profile())
		r = profiled_routes();
	else if (gfp_route_budget()) {
		bool watch = gfp_route_budget_watched() ||
		             __atomic_load_n(&jemalloc_may_fail, __ATOMIC_RELAXED);
		struct routes inner = watch ? watched_routes() : direct_routes();
		set_alloc_routes(&budget_inner, &inner);
		budget_route_hook(set_budget_routes);
		gfp_free_route_set = set_free_route;
		thread_update_free_direct(); /* sets free's route */
	}
	if (r.malloc)
		set_alloc_routes(&route, &r);
	if (gfp_route_direct_free())
		__atomic_store_n(&route.free, gfp_je_free, __ATOMIC_RELAXED);
	else if (gfp_route_count())
		__atomic_store_n(&route.free, counted_free, __ATOMIC_RELAXED);
	else if (gfp_route_profile()) {
		gfp_free_route_set = set_profiled_free_route;
		thread_update_free_direct(); /* sets free's route */
	}
	if (gfp_policy.confirm) {
#define KIND(f)                                                                                    \
	(route.f == shim_##f             ? "shim"                                                  \
	 : route.f == watched_##f        ? "watched"                                               \
	 : route.f == counted_##f        ? "counted"                                               \
	 : route.f == profiled_##f       ? "profiled"                                              \
	 : route.f != budget_##f         ? "jemalloc"                                              \
	 : budget_inner.f == watched_##f ? "budget+watched"                                        \
	                                 : "budget")
		gfp_log(GFP_LOG_INFO,
		        "routes: malloc=%s calloc=%s realloc=%s posix_memalign=%s memalign=%s "
		        "aligned_alloc=%s free=%s",
		        KIND(malloc), KIND(calloc), KIND(realloc), KIND(posix_memalign),
		        KIND(memalign), KIND(aligned_alloc),
		        route.free == shim_free       ? "shim"
		        : route.free == counted_free  ? "counted"
		        : route.free == profiled_free ? "profiled"
		                                      : "jemalloc");
#undef KIND
	}
}

EXPORT size_t malloc_usable_size(void *p)
{
	return p ? sallocx(p, 0) : 0;
}

/* glibc's internal names, which a few programs call directly: bound to
 * glibc's own heap they would hand jemalloc pointers it does not own. */
#ifdef __clang__
#define ALIAS(f) __attribute__((alias(#f)))
#else
#define ALIAS(f) __attribute__((alias(#f), copy(f)))
#endif
EXPORT void *__libc_malloc(size_t n) ALIAS(malloc);
EXPORT void __libc_free(void *p) ALIAS(free);
EXPORT void *__libc_calloc(size_t a, size_t b) ALIAS(calloc);
EXPORT void *__libc_realloc(void *p, size_t n) ALIAS(realloc);
EXPORT void *__libc_memalign(size_t a, size_t n) ALIAS(memalign);
EXPORT void *__libc_valloc(size_t n) ALIAS(valloc);
EXPORT void *__libc_pvalloc(size_t n) ALIAS(pvalloc);

/* ------------------------------------------------------------------------
 * glibc's introspection calls, answered from jemalloc's statistics.
 * ---------------------------------------------------------------------- */

struct je_totals {
	size_t allocated, active, mapped, resident;
};

static struct je_totals je_totals(void)
{
	struct je_totals t = {0, 0, 0, 0};
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch);
	mallctl("epoch", &epoch, &sz, &epoch, sz);
	sz = sizeof(size_t);
	mallctl("stats.allocated", &t.allocated, &sz, NULL, 0);
	mallctl("stats.active", &t.active, &sz, NULL, 0);
	mallctl("stats.mapped", &t.mapped, &sz, NULL, 0);
	mallctl("stats.resident", &t.resident, &sz, NULL, 0);
	return t;
}

EXPORT struct mallinfo2 mallinfo2(void)
{
	struct je_totals t = je_totals();
	struct mallinfo2 mi = {0};
	mi.arena = t.mapped;
	mi.ordblks = 1;
	mi.uordblks = t.allocated;
	mi.fordblks = t.mapped > t.allocated ? t.mapped - t.allocated : 0;
	return mi;
}

/* The int-sized original, still called by old programs; values saturate. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
EXPORT struct mallinfo mallinfo(void)
{
	struct mallinfo2 m2 = mallinfo2();
	struct mallinfo mi = {0};
#define SAT(x) ((x) > (size_t)INT_MAX ? INT_MAX : (int)(x))
	mi.arena = SAT(m2.arena);
	mi.ordblks = SAT(m2.ordblks);
	mi.uordblks = SAT(m2.uordblks);
	mi.fordblks = SAT(m2.fordblks);
#undef SAT
	return mi;
}
#pragma GCC diagnostic pop

/* Purging is what trimming means to jemalloc: give dirty pages back. */
EXPORT int malloc_trim(size_t pad)
{
	(void)pad;
	char name[64];
	gfp_snprintf(name, sizeof(name), "arena.%u.purge", (unsigned)MALLCTL_ARENAS_ALL);
	return mallctl(name, NULL, NULL, NULL, 0) == 0;
}

/* glibc's layout, on stderr, without stdio. */
EXPORT void malloc_stats(void)
{
	struct je_totals t = je_totals();
	char buf[512];
	int n = gfp_snprintf(buf, sizeof(buf),
	                     "Arena 0:\nsystem bytes     = %10zu\nin use bytes     = %10zu\n"
	                     "Total (incl. mmap):\nsystem bytes     = %10zu\n"
	                     "in use bytes     = %10zu\nmax mmap regions = %10u\n"
	                     "max mmap bytes   = %10u\n",
	                     t.mapped, t.allocated, t.mapped, t.allocated, 0u, 0u);
	gfp_write_all(STDERR_FILENO, buf, (size_t)n);
}

/* ------------------------------------------------------------------------
 * The public API's hook and the library's lifetime.
 * ---------------------------------------------------------------------- */

EXPORT int gfpshim_active(void)
{
	return 1;
}

/* Initialisation is lazy (the first allocation does it); this makes sure a
 * program that never allocates before main still gets its configuration
 * checked before main, and chooses the routes once the policy is known. */
__attribute__((constructor(101))) static void gfpshim_ctor(void)
{
	if (gfp_init())
		choose_routes();
}

__attribute__((destructor(101))) static void gfpshim_dtor(void)
{
	gfp_fini();
}
