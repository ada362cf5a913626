/*
 * gfpshim.h - the public API of gfpshim.
 *
 * A program built against this header links with no extra library and runs
 * with or without the shim: every call goes through a weak reference that is
 * bound when libgfpshim.so is preloaded and falls back to a neutral answer
 * when it is not (gfp_active() is then 0).
 *
 * Flag values mirror the kernel's gfp bits (include/linux/gfp_types.h) so that
 * "mode:0x..." in our logs decodes like the kernel's %pGg.
 *
 * Languages: C89/C90 and every later C, GNU dialects included, and C++98 and
 * every later C++, with GCC or Clang (weak symbols and asm labels are GNU C);
 * tests/slowpath/header_std.sh builds and runs each with -Wpedantic -Werror.
 * The inline fallbacks call only what <stdlib.h> declares in C89 (malloc,
 * calloc, realloc), plus libc's aligned_alloc under a name of their own.
 */
#ifndef GFPSHIM_H
#define GFPSHIM_H

#include <stddef.h>
#include <stdlib.h> /* without the shim, libc's allocator serves */

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned int gfp_t;

/* C89 has no inline keyword; GCC and Clang take __inline__ in every mode. */
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define GFP_INLINE_ static inline
#else
#define GFP_INLINE_ static __inline__
#endif

/* Building blocks (kernel bit values). */
#define GFP_HIGH_BIT           0x20u
#define GFP_IO_BIT             0x40u
#define GFP_FS_BIT             0x80u
#define GFP_ZERO_BIT           0x100u
#define GFP_DIRECT_RECLAIM_BIT 0x400u
#define GFP_KSWAPD_RECLAIM_BIT 0x800u
#define GFP_NOWARN_BIT         0x2000u
#define GFP_RETRY_MAYFAIL_BIT  0x4000u
#define GFP_NOFAIL_BIT         0x8000u
#define GFP_NORETRY_BIT        0x10000u
#define GFP_MEMALLOC_BIT       0x20000u
#define GFP_NOMEMALLOC_BIT     0x80000u

/* Base contexts: exactly one per request. */
#define GFP_KERNEL (GFP_DIRECT_RECLAIM_BIT | GFP_KSWAPD_RECLAIM_BIT | GFP_IO_BIT | GFP_FS_BIT)
#define GFP_NOFS   (GFP_DIRECT_RECLAIM_BIT | GFP_KSWAPD_RECLAIM_BIT | GFP_IO_BIT)
#define GFP_NOIO   (GFP_DIRECT_RECLAIM_BIT | GFP_KSWAPD_RECLAIM_BIT)
#define GFP_ATOMIC (GFP_HIGH_BIT | GFP_KSWAPD_RECLAIM_BIT)
#define GFP_NOWAIT (GFP_KSWAPD_RECLAIM_BIT)

/* Modifiers: any number. */
#define GFP_NORETRY       GFP_NORETRY_BIT
#define GFP_RETRY_MAYFAIL GFP_RETRY_MAYFAIL_BIT
#define GFP_NOFAIL        GFP_NOFAIL_BIT
#define GFP_NOWARN        GFP_NOWARN_BIT
#define GFP_HIGH          GFP_HIGH_BIT
#define GFP_MEMALLOC      GFP_MEMALLOC_BIT
#define GFP_NOMEMALLOC    GFP_NOMEMALLOC_BIT
#define GFP_ZERO          GFP_ZERO_BIT

/* Shrinker kinds: what a shrinker needs from the context to be called. */
#define GFP_SHRINK_NONE 0u /* always callable */
#define GFP_SHRINK_IO   1u /* needs GFP_IO: skipped under NOIO */
#define GFP_SHRINK_FS   2u /* needs GFP_FS: skipped under NOFS and NOIO */

typedef size_t (*gfp_shrink_fn)(void *arg, size_t want, gfp_t ctx);
typedef size_t (*gfp_oom_fn)(void *arg);

/* The symbols the shim exports. Weak, so that a program runs without it. */
extern int gfpshim_active(void) __attribute__((weak));
extern void *gfpshim_malloc(size_t size, gfp_t flags) __attribute__((weak));
extern void *gfpshim_calloc(size_t nmemb, size_t size, gfp_t flags) __attribute__((weak));
extern void *gfpshim_realloc(void *p, size_t size, gfp_t flags) __attribute__((weak));
extern void *gfpshim_aligned_alloc(size_t align, size_t size, gfp_t flags) __attribute__((weak));
extern unsigned gfpshim_scope_push(gfp_t flags) __attribute__((weak));
extern void gfpshim_scope_pop(unsigned cookie) __attribute__((weak));
extern int gfpshim_reserve(size_t bytes, gfp_t flags) __attribute__((weak));
extern void gfpshim_unreserve(void) __attribute__((weak));
extern int gfpshim_shrinker_register(gfp_shrink_fn scan, void *arg, unsigned kind)
	__attribute__((weak));
extern int gfpshim_oom_notifier_register(gfp_oom_fn fn, void *arg) __attribute__((weak));

/*
 * libc's aligned_alloc, for gfp_aligned_alloc() without the shim. <stdlib.h>
 * declares aligned_alloc only for C11 and C++17 (glibc: __USE_ISOC11), and a
 * call without a declaration cuts the pointer to an int under C89/C99; the
 * asm label binds this declaration to the same symbol in every language.
 */
extern void *gfpshim_libc_aligned_alloc(size_t align, size_t size) __asm__("aligned_alloc");

/**
 * gfp_active() - is libgfpshim.so loaded into this process?
 *
 * Return: 1 when the shim serves this process's allocations, 0 otherwise.
 * Context: any, including signal handlers.
 */
GFP_INLINE_ int gfp_active(void)
{
	return gfpshim_active ? gfpshim_active() : 0;
}

/**
 * gfp_malloc() - allocate with explicit flags.
 * @size: bytes; @flags: a base context and modifiers, e.g. GFP_NOFS | GFP_NOFAIL.
 *
 * The flags decide what happens under memory pressure, as in the kernel:
 * GFP_NOWAIT fails at once, GFP_NORETRY after one round of reclaim, a small
 * GFP_KERNEL request loops ("too small to fail"), GFP_NOFAIL never fails.
 * GFP_ZERO zeroes the memory. Free it with free().
 * Return: the memory, or NULL with errno ENOMEM.
 * Context: any thread; may sleep unless the flags say NOWAIT or ATOMIC.
 */
GFP_INLINE_ void *gfp_malloc(size_t size, gfp_t flags)
{
	return gfpshim_malloc ? gfpshim_malloc(size, flags) : malloc(size);
}

/** gfp_calloc() - calloc() with flags; the overflow check is calloc's. */
GFP_INLINE_ void *gfp_calloc(size_t nmemb, size_t size, gfp_t flags)
{
	return gfpshim_calloc ? gfpshim_calloc(nmemb, size, flags) : calloc(nmemb, size);
}

/** gfp_realloc() - realloc() with flags; on failure the block is left intact. */
GFP_INLINE_ void *gfp_realloc(void *p, size_t size, gfp_t flags)
{
	return gfpshim_realloc ? gfpshim_realloc(p, size, flags) : realloc(p, size);
}

/** gfp_aligned_alloc() - aligned_alloc() with flags. */
GFP_INLINE_ void *gfp_aligned_alloc(size_t align, size_t size, gfp_t flags)
{
	return gfpshim_aligned_alloc ? gfpshim_aligned_alloc(align, size, flags)
				     : gfpshim_libc_aligned_alloc(align, size);
}

/**
 * gfp_scope_push() - restrict every allocation of this thread until the pop.
 * @flags: GFP_NOFS, GFP_NOIO (wins over NOFS), or modifiers to add
 *         (GFP_NOWARN, GFP_NORETRY, ...).
 *
 * Like the kernel's memalloc_nofs_save(): a NOFS scope takes FS away from
 * whatever each allocation asks for (a NOFAIL request stays NOFAIL). Scopes
 * nest: pop with the cookie in LIFO order and exactly the bits this push
 * added are removed. New threads start with no scope.
 * Return: the cookie for gfp_scope_pop(); 0 without the shim.
 * Context: any, including signal handlers.
 */
GFP_INLINE_ unsigned gfp_scope_push(gfp_t flags)
{
	return gfpshim_scope_push ? gfpshim_scope_push(flags) : 0;
}

/** gfp_scope_pop() - end the scope gfp_scope_push() returned @cookie for. */
GFP_INLINE_ void gfp_scope_pop(unsigned cookie)
{
	if (gfpshim_scope_pop)
		gfpshim_scope_pop(cookie);
}

/**
 * gfp_reserve() - guarantee @bytes to this thread's next allocations.
 * Return: 0 on success (always without the shim), -1 with errno ENOMEM when
 * the flags forbid waiting for the memory.
 */
GFP_INLINE_ int gfp_reserve(size_t bytes, gfp_t flags)
{
	return gfpshim_reserve ? gfpshim_reserve(bytes, flags) : 0;
}

/** gfp_unreserve() - give back what is left of this thread's reservation. */
GFP_INLINE_ void gfp_unreserve(void)
{
	if (gfpshim_unreserve)
		gfpshim_unreserve();
}

/**
 * gfp_shrinker_register() - a cache the slow path may shrink under pressure.
 * @scan: frees up to @want bytes, returns how many it freed; it is called
 *        with the context of the allocation that needs memory, and only when
 *        that context allows @kind (GFP_SHRINK_FS is skipped under NOFS).
 * Return: 0 (also without the shim: the shrinker is then never called),
 * -1 when the table of shrinkers is full.
 * Context: any thread; @scan runs on an allocating thread, which may hold
 * the program's locks: it must not take locks that allocation paths hold.
 */
GFP_INLINE_ int gfp_shrinker_register(gfp_shrink_fn scan, void *arg, unsigned kind)
{
	return gfpshim_shrinker_register ? gfpshim_shrinker_register(scan, arg, kind) : 0;
}

/**
 * gfp_oom_notifier_register() - called first by the OOM step, under every oom=.
 * @fn: frees what it can and returns the bytes freed; progress if non-zero.
 * Return: 0, or -1 when the table is full.
 */
GFP_INLINE_ int gfp_oom_notifier_register(gfp_oom_fn fn, void *arg)
{
	return gfpshim_oom_notifier_register ? gfpshim_oom_notifier_register(fn, arg) : 0;
}

/* What gfp_budget_usage() fills in: bytes, as long (64 bits on the 64-bit
 * Linux the shim runs on; long long would not be C89 or C++98). */
struct gfp_budget_usage {
	long limit;    /* limit= in bytes; 0: no budget */
	long live;     /* bytes the program holds, as the budget counts them */
	long reserved; /* taken by reservations and not drawn yet */
};
extern int gfpshim_budget_usage(struct gfp_budget_usage *u) __attribute__((weak));

/**
 * gfp_budget_usage() - the budget (limit=) as the shim sees it now.
 * @u: filled in; all 0 when there is no budget.
 *
 * @u->live counts every thread's allocations and frees, whichever thread
 * made them and whether it still runs: the bytes jemalloc has handed out
 * and not taken back (its "stats.allocated" less its internal bytes, after
 * an "epoch" at a quiescent point with every thread's cache flushed).
 * Return: 0; -1 without the shim (@u is then all 0) or when @u is NULL.
 * Context: any thread; takes the shim's locks, so not a signal handler.
 */
GFP_INLINE_ int gfp_budget_usage(struct gfp_budget_usage *u)
{
	if (gfpshim_budget_usage)
		return gfpshim_budget_usage(u);
	if (u)
		u->limit = u->live = u->reserved = 0;
	return -1;
}
#undef GFP_INLINE_

#ifdef __cplusplus
}
#endif
#endif /* GFPSHIM_H */
