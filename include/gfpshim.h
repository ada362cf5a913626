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
 */
#ifndef GFPSHIM_H
#define GFPSHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned int gfp_t;

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

/* The symbols the shim exports. Weak, so that a program runs without it. */
extern int gfpshim_active(void) __attribute__((weak));

/**
 * gfp_active() - is libgfpshim.so loaded into this process?
 *
 * Return: 1 when the shim serves this process's allocations, 0 otherwise.
 * Context: any, including signal handlers.
 */
static inline int gfp_active(void)
{
	return gfpshim_active ? gfpshim_active() : 0;
}

#ifdef __cplusplus
}
#endif
#endif /* GFPSHIM_H */
