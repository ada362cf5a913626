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
#include "routes_profiled.h"
#include "shim.h"

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

/* noinline, as the compiler keeps the others: the sized routes reach
 * them by a tail jump, and would otherwise load jemalloc's function before
 * their size test on every call. */
static __attribute__((noinline)) void *watched_malloc(size_t n)
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

static __attribute__((noinline)) int watched_posix_memalign(void **memptr, size_t align, size_t n)
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
	struct gfp_routes families[ROUTE_KINDS] = {
	    [ROUTE_SHIM] = {shim_malloc, shim_free, shim_calloc, shim_realloc, shim_posix_memalign,
	                    shim_memalign, shim_aligned_alloc},
	    [ROUTE_DIRECT] = {gfp_je_malloc, gfp_je_free, gfp_je_calloc, direct_realloc,
	                      gfp_je_posix_memalign, direct_memalign, direct_aligned_alloc},
	    [ROUTE_WATCHED] = {watched_malloc, gfp_je_free, watched_calloc, watched_realloc,
	                       watched_posix_memalign, watched_memalign, watched_aligned_alloc},
	    [ROUTE_COUNTED] = {counted_malloc, counted_free, counted_calloc, counted_realloc,
	                       counted_posix_memalign, counted_memalign, counted_aligned_alloc},
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
	routes_profiled(&families[ROUTE_PROFILED]);
	route_sized(sized);
	route_start(&gfp_routes, &gfp_routes_inner, families);
}
