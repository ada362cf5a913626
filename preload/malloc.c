/*
 * malloc.c - the C allocation entry points libgfpshim.so exports.
 *
 * Each one checks the arguments the way glibc 2.36 does and hands the
 * request (entry, size, jemalloc flags, alignment) to the fast path, or, for
 * malloc and its kin, jumps through a route that may skip the shim
 * (routes.c; src/route.c chooses). Programs were
 * written against glibc, so its answers are the contract: errno ENOMEM,
 * posix_memalign leaves *memptr and errno alone on failure, realloc(p, 0)
 * frees and returns NULL, free keeps errno, memalign rounds a non-power-of-two
 * alignment up.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "fastpath.h"
#include "routes.h"

#define EXPORT __attribute__((visibility("default")))

static inline size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

void *shim_malloc(size_t n)
{
	return fastpath_alloc(GFP_E_malloc, n, 0, 0);
}

void shim_free(void *p)
{
	fastpath_free(GFP_E_free, p, 0, 0);
}

void *shim_calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return fastpath_alloc(GFP_E_calloc, n, MALLOCX_ZERO, 0);
}

static inline void *do_realloc(enum gfp_entry entry, void *old, size_t n)
{
	if (old == NULL)
		return fastpath_alloc(entry, n, 0, 0);
	if (n == 0) { /* glibc: REALLOC_ZERO_BYTES_FREES */
		fastpath_free(entry, old, 0, 0);
		return NULL;
	}
	return fastpath_realloc(entry, old, n);
}

/* noinline: also the fallback of direct_realloc, whose common case should
 * not pay for this one's frame. */
__attribute__((noinline)) void *shim_realloc(void *old, size_t n)
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
	return fastpath_aligned(entry, align, n);
}

/* noinline: also the fallback of direct_memalign, which stays frameless. */
__attribute__((noinline)) void *shim_memalign(size_t align, size_t n)
{
	return do_memalign(GFP_E_memalign, align, n);
}

/* glibc before 2.38 treats aligned_alloc exactly like memalign. noinline:
 * also the fallback of direct_aligned_alloc. */
__attribute__((noinline)) void *shim_aligned_alloc(size_t align, size_t n)
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
__attribute__((noinline)) int posix_memalign_policy(void **memptr, size_t align, size_t n,
                                                    uintptr_t caller)
{
	if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0 || align == 0)
		return EINVAL;
	int saved = errno;
	void *p = fastpath_policy_alloc(GFP_E_posix_memalign, n ? n : 1, MALLOCX_ALIGN(align),
	                                align, caller);
	errno = saved;
	if (!p)
		return ENOMEM;
	*memptr = p;
	return 0;
}

int shim_posix_memalign(void **memptr, size_t align, size_t n)
{
	if (likely(fastpath_countdown())) {
		/* jemalloc's own checks are glibc's (EINVAL, ENOMEM, *memptr left
		 * alone), and a failing mmap inside it keeps errno (oscalls.c). */
		return gfp_je_posix_memalign(memptr, align, n);
	}
	return posix_memalign_policy(memptr, align, n, (uintptr_t)__builtin_return_address(0));
}

EXPORT void *malloc(size_t n)
{
	return gfp_routes.malloc(n);
}

EXPORT void free(void *p)
{
	gfp_routes.free(p);
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
	return gfp_routes.calloc(nmemb, size);
}

EXPORT void *realloc(void *old, size_t n)
{
	return gfp_routes.realloc(old, n);
}

EXPORT int posix_memalign(void **memptr, size_t align, size_t n)
{
	return gfp_routes.posix_memalign(memptr, align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
	return gfp_routes.memalign(align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	return gfp_routes.aligned_alloc(align, n);
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
	if (init_ensure()) {
		routes_start();
		tree_export_env(); /* GFP_TREE for the children */
	}
}

__attribute__((destructor(101))) static void gfpshim_dtor(void)
{
	init_fini();
}
