/*
 * routes.h - what malloc.c and routes.c share: the shim's own entry points
 * (glibc's argument rules, then the fast path), which every route family
 * falls back to, and the tables the exports jump through.
 */
#ifndef GFP_PRELOAD_ROUTES_H
#define GFP_PRELOAD_ROUTES_H

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

/* What each export jumps through, and what the budget family jumps to
 * after its charge (route.c writes both). */
extern struct gfp_routes gfp_routes;
extern struct gfp_routes gfp_routes_inner;

/* The constructor, once init_ensure has read the policy: route.c chooses. */
void routes_start(void);

#pragma GCC visibility pop

#endif
