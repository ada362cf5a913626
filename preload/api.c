/*
 * api.c - the public C API of include/gfpshim.h, as the shim exports it.
 *
 * The header reaches these through weak references, so the same program runs
 * without the shim. Allocations with explicit flags always go through the
 * policy, even in a process that is otherwise idle.
 */
#include <errno.h>
#include <stdint.h>

#include "internal.h"
#include "fastpath.h"
#include "reserve_take.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void *gfpshim_malloc(size_t size, gfp_t flags)
{
	return fastpath_alloc_flags(GFP_E_gfp_malloc, NULL, size, 0, flags);
}

EXPORT void *gfpshim_calloc(size_t nmemb, size_t size, gfp_t flags)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return fastpath_alloc_flags(GFP_E_gfp_calloc, NULL, n, 0, flags | GFP_ZERO);
}

EXPORT void *gfpshim_realloc(void *p, size_t size, gfp_t flags)
{
	if (p && size == 0) { /* realloc's contract: free and return NULL */
		fastpath_free(GFP_E_gfp_realloc, p, 0, 0);
		return NULL;
	}
	return fastpath_alloc_flags(GFP_E_gfp_realloc, p, size, 0, flags);
}

EXPORT void *gfpshim_aligned_alloc(size_t align, size_t size, gfp_t flags)
{
	if (align == 0 || (align & (align - 1)) || align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	return fastpath_alloc_flags(GFP_E_gfp_aligned_alloc, NULL, size, align, flags);
}

EXPORT unsigned gfpshim_scope_push(gfp_t flags)
{
	return context_scope_push(flags);
}

EXPORT void gfpshim_scope_pop(unsigned cookie)
{
	context_scope_pop(cookie);
}

EXPORT int gfpshim_reserve(size_t bytes, gfp_t flags)
{
	return reserve_take(bytes, flags);
}

EXPORT void gfpshim_unreserve(void)
{
	reserve_release();
}

EXPORT int gfpshim_shrinker_register(gfp_shrink_fn scan, void *arg, unsigned kind)
{
	return reclaim_shrinker_register(scan, arg, kind);
}

EXPORT int gfpshim_oom_notifier_register(gfp_oom_fn fn, void *arg)
{
	return reclaim_oom_notifier_register(fn, arg);
}

EXPORT int gfpshim_budget_usage(struct gfp_budget_usage *u)
{
	if (!u) {
		errno = EINVAL;
		return -1;
	}
	u->limit = u->live = u->reserved = 0;
	if (init_ensure() && gfp_budget_on) {
		tree_settle(); /* a tree's members that are gone give theirs back first */
		u->limit = budget_limit();
		u->live = budget_live();
		u->reserved = budget_reserved();
	}
	return 0;
}
