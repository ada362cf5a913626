/*
 * malloc.c - the C allocation entry points libgfpshim.so exports, and the
 * table they jump through.
 *
 * malloc and its kin are one indirect jump each: to the shim's own
 * function (shim.c: glibc 2.36's argument rules, then the fast path) until
 * the constructor knows the policy, then to the route src/route.c chose
 * for it (routes.c), which may be jemalloc's own function. glibc's
 * internal names alias them; glibc's introspection calls are answered from
 * jemalloc's statistics.
 */
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "fastpath.h"
#include "shim.h"

#define EXPORT __attribute__((visibility("default")))

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
 * The public API's hook.
 * ---------------------------------------------------------------------- */

EXPORT int gfpshim_active(void)
{
	return 1;
}
