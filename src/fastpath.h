/*
 * fastpath.h - the fast path, inlined into every entry point of preload/.
 *
 * It serves every call that meets the shim: C++ new and delete, valloc,
 * pvalloc and reallocarray always, and malloc and its kin wherever their
 * routes are the shim's (route.c). With no policy active an
 * allocation costs one thread-local decrement and the jemalloc call; a free,
 * one thread-local read and the jemalloc call. Everything else - the first
 * call of a thread, a policy, a real ENOMEM - leaves through one tail call
 * into the engine (fastpath.c), so the inlined code saves no registers and
 * takes no locks.
 */
#ifndef GFP_FASTPATH_H
#define GFP_FASTPATH_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jemalloc/jemalloc.h>

#include "backend.h"
#include "thread.h"
#include "types.h"

#pragma GCC visibility push(hidden)

/* The engine's half, out of line. The request travels in registers and
 * becomes a struct gfp_req only there, so that the inlined fast path builds
 * nothing and can tail-call it. Returns NULL with errno set on failure. */
void *fastpath_policy_alloc(enum gfp_entry entry, size_t size, int mallocx_flags, size_t align,
                            uintptr_t caller) __attribute__((noinline));
void *fastpath_policy_realloc(enum gfp_entry entry, void *old, size_t size, uintptr_t caller)
    __attribute__((noinline));
void fastpath_policy_free(enum gfp_entry entry, void *p, size_t size, int flags)
    __attribute__((noinline));
/* A block a profiled route (stats=sites) got from jemalloc and could not
 * count in line: counted as the shim's own route would have. Returns p. */
void *fastpath_profiled(void *p, enum gfp_entry entry, size_t size, int mallocx_flags, size_t align,
                        uintptr_t caller) __attribute__((noinline));
/* gfp_malloc and friends: always through the policy, with the caller's flags. */
void *fastpath_alloc_flags(enum gfp_entry entry, void *old, size_t size, size_t align, gfp_t flags);

/* --gfp_tls.countdown > 0, as one instruction on the thread's own memory
 * (a compiler loads, subtracts, stores and tests). */
static inline __attribute__((always_inline)) bool fastpath_countdown(void)
{
#if defined(__x86_64__)
	/* An input operand and a memory clobber, not "+m": GCC 12 loses the
	 * label of an asm goto with outputs once it is inlined twice. */
	asm goto("subq $1, %0\n\tjle %l[engine]"
	         :
	         : "m"(gfp_tls.countdown)
	         : "cc", "memory"
	         : engine);
	return true;
engine:
	return false;
#else
	return --gfp_tls.countdown > 0;
#endif
}

/* A thread under the policy, not inside the shim nor a shrinker. */
static inline bool fastpath_plain_thread(void)
{
	/* mode and guard are adjacent bytes: one compare for both. */
	return gfp_tls.mode == GFP_TLS_POLICY && !gfp_tls.guard && !gfp_tls.in_reclaim;
}

/* `align` is 0 for the natural alignment, else what MALLOCX_ALIGN() encodes. */
static inline __attribute__((always_inline)) void *fastpath_alloc(enum gfp_entry entry, size_t size,
                                                                  int mallocx_flags, size_t align)
{
	if (likely(fastpath_countdown())) {
		/* Idle means plain jemalloc: its malloc answers malloc(0) and
		 * sets errno itself, so this is a tail call. mallocx_flags is a
		 * constant at every inlined call site. */
		if (!mallocx_flags)
			return gfp_je_malloc(size);
		if (mallocx_flags == MALLOCX_ZERO)
			return gfp_je_calloc(1, size);
		if (align >= sizeof(void *) && !(mallocx_flags & MALLOCX_ZERO))
			return gfp_je_aligned_alloc(align, size); /* sets errno too */
		void *p = mallocx(size ? size : 1, mallocx_flags);
		if (likely(p != NULL))
			return p;
	}
	return fastpath_policy_alloc(entry, size ? size : 1, mallocx_flags, align,
	                             (uintptr_t)__builtin_return_address(0));
}

/* memalign and its kin, `align` a power of two of at least sizeof(void *):
 * the flags are worked out only for the engine. */
static inline __attribute__((always_inline)) void *fastpath_aligned(enum gfp_entry entry,
                                                                    size_t align, size_t size)
{
	if (likely(fastpath_countdown()))
		return gfp_je_aligned_alloc(align, size); /* sets errno */
	return fastpath_policy_alloc(entry, size ? size : 1, MALLOCX_ALIGN(align), align,
	                             (uintptr_t)__builtin_return_address(0));
}

static inline __attribute__((always_inline)) void *fastpath_realloc(enum gfp_entry entry, void *old,
                                                                    size_t size)
{
	if (likely(fastpath_countdown())) {
		/* jemalloc 5.3's realloc keeps the block on failure but sets no
		 * errno itself: only a failed mmap inside it may have. */
		void *p = gfp_je_realloc(old, size);
		if (unlikely(p == NULL))
			errno = ENOMEM;
		return p;
	}
	return fastpath_policy_realloc(entry, old, size, (uintptr_t)__builtin_return_address(0));
}

/* Gives a block back to jemalloc by the cheapest entry its caller allows:
 * sized (operator delete), with alignment flags, or jemalloc's own free. */
static inline __attribute__((always_inline)) void fastpath_release(void *p, size_t size, int flags)
{
	if (size)
		sdallocx(p, size, flags);
	else if (flags)
		dallocx(p, flags);
	else
		gfp_je_free(p);
}

/* `size` is the caller's size for sized deletes, 0 when unknown; `flags` the
 * alignment the block was allocated with (jemalloc's sdallocx needs both).
 * A tail call: free() keeps errno because the system calls that could
 * change it inside jemalloc keep it themselves (preload/oscalls.c). */
static inline __attribute__((always_inline)) void fastpath_free(enum gfp_entry entry, void *p,
                                                                size_t size, int flags)
{
	if (likely(gfp_tls.free_direct)) {
		if (size || flags) {
			if (p != NULL)
				fastpath_release(p, size, flags);
		} else {
			gfp_je_free(p); /* jemalloc's free takes NULL */
		}
		return;
	}
	fastpath_policy_free(entry, p, size, flags);
}

#pragma GCC visibility pop

#endif /* GFP_FASTPATH_H */
