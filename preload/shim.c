/*
 * shim.c - the shim's own malloc and its kin: glibc 2.36's argument rules,
 * then the fast path (src/fastpath.c). Every route family falls back to
 * these (routes.c), the exports jump to them until the routes are chosen
 * (malloc.c), and the calls no route serves (reallocarray, valloc, pvalloc)
 * are exported from here.
 *
 * Programs were written against glibc, so its answers are the contract:
 * errno ENOMEM, posix_memalign leaves *memptr and errno alone on failure,
 * realloc(p, 0) frees and returns NULL, memalign rounds a non-power-of-two
 * alignment up.
 */
#include <errno.h>
#include <unistd.h>

#include "internal.h"
#include "fastpath.h"
#include "shim.h"

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

#ifdef __clang__
#define ALIAS(f) __attribute__((alias(#f)))
#else
#define ALIAS(f) __attribute__((alias(#f), copy(f)))
#endif
/* glibc's internal names (malloc.c has the others). */
EXPORT void *__libc_valloc(size_t n) ALIAS(valloc);
EXPORT void *__libc_pvalloc(size_t n) ALIAS(pvalloc);
