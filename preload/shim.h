/*
 * shim.h - what every file of preload/ shares: the shim's own entry points
 * (glibc's argument rules, then the fast path: shim.c), which every route
 * family falls back to, and the table the exports jump through (malloc.c).
 */
#ifndef GFP_PRELOAD_SHIM_H
#define GFP_PRELOAD_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "route.h"

#pragma GCC visibility push(hidden)

void *shim_malloc(size_t n);
void shim_free(void *p);
void *shim_calloc(size_t nmemb, size_t size);
/* noinline: the fallback of families whose common case should not pay
 * for its frame. */
__attribute__((noinline)) void *shim_realloc(void *old, size_t n);
__attribute__((noinline)) void *shim_memalign(size_t align, size_t n);
__attribute__((noinline)) void *shim_aligned_alloc(size_t align, size_t n);
int shim_posix_memalign(void **memptr, size_t align, size_t n);
/* posix_memalign once the countdown is spent (or jemalloc failed). */
__attribute__((noinline)) int posix_memalign_policy(void **memptr, size_t align, size_t n,
                                                    uintptr_t caller);

/* What each export jumps through: the shim's own functions until
 * routes_start has the policy's routes written (route.c writes it). */
extern struct gfp_routes gfp_routes;

/* An alignment for which glibc's memalign and aligned_alloc answer as
 * jemalloc's aligned_alloc does: a power of two, at least a pointer's. */
static inline bool glibc_aligns_as_jemalloc(size_t align)
{
	return align >= sizeof(void *) && !(align & (align - 1));
}

/* The return address of the call a route serves: the call site as the
 * program made it. */
#define CALLER ((uintptr_t)__builtin_return_address(0))

#pragma GCC visibility pop

#endif
