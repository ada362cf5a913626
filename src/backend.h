/*
 * backend.h - backend.c: jemalloc's fastest entry for each kind of request.
 */
#ifndef GFP_BACKEND_H
#define GFP_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "types.h"

#pragma GCC visibility push(hidden)

extern void *(*gfp_je_malloc)(size_t);
extern void (*gfp_je_free)(void *);
extern void *(*gfp_je_realloc)(void *, size_t);
extern void *(*gfp_je_calloc)(size_t, size_t);
extern int (*gfp_je_posix_memalign)(void **, size_t, size_t);
/* For memalign too: jemalloc 5.3's own memalign sets no errno. */
extern void *(*gfp_je_aligned_alloc)(size_t, size_t); /* power-of-two align >= 8 */
/* Where jemalloc's code lies: 0, 0 until backend_init. */
extern struct gfp_range gfp_je_text;
/* The gfp_je_* are jemalloc's own malloc, free...: they answer as glibc
 * does but for the cases the routes check (preload/routes.c). Else the
 * x-API wrappers above serve (a jemalloc built with a prefix). */
extern bool gfp_je_own;
void backend_init(void);

#pragma GCC visibility pop

#endif /* GFP_BACKEND_H */
