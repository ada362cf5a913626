/*
 * types.h - the engine's shared types: a request and its state in the slow
 * path, a symbolized frame, an address range, an entry point's counts. Types
 * only, owned by no module; the modules' own types are in their headers.
 */
#ifndef GFP_TYPES_H
#define GFP_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gfpshim.h"

#pragma GCC visibility push(hidden)

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* The entry points, from src/entries.def. */
enum gfp_entry {
#define ENTRY(id, name, kind) GFP_E_##id,
#include "entries.def"
#undef ENTRY
	GFP_ENTRY_COUNT
};

/* Why an attempt failed. */
enum gfp_why { GFP_WHY_NONE, GFP_WHY_BUDGET, GFP_WHY_REAL, GFP_WHY_INJECT };

/* One allocation request inside the engine. */
struct gfp_req {
	enum gfp_entry entry;
	int mallocx_flags;   /* MALLOCX_ZERO, MALLOCX_ALIGN(): what jemalloc is asked */
	size_t size;         /* bytes asked for; never 0 (mallocx forbids it) */
	size_t align;        /* 0 for the natural alignment */
	void *old;           /* realloc: the block being moved */
	gfp_t gfp;           /* explicit flags on entry, the effective context after */
	enum gfp_why why;    /* set by a failed attempt */
	bool ctx_resolved;   /* gfp holds the effective context */
	uintptr_t caller;    /* return address of the entry point, 0 if unknown */
	uint64_t path;       /* the call-path id (path.h: path_of_caller) once computed, else 0 */
	uint64_t call;       /* eligible-call number (injection) */
	bool explicit_flags; /* gfp_malloc & co.: the slow path applies even when idle */
	size_t old_usable;   /* realloc under stats=sites: the old block's usable size */
	unsigned old_caller_idx; /* realloc under stats=sites: the old block's caller index */
	bool reserve;            /* gfp_reserve: an attempt takes a reservation, not a block */
	bool mapping;            /* a mapping's charge (mapped.c): an attempt charges, no block */
	bool may_draw_thread;    /* would otherwise loop: reserve.thread may serve it */
};

/* The state of one request in the slow path. */
struct gfp_slow {
	struct gfp_req *req;
	uint64_t start_ns;
	uint64_t next_canary_ms;
	unsigned rounds, no_progress;
	bool oom_exempt_logged;
};

/* One frame of a backtrace, symbolized. */
struct gfp_frame {
	uintptr_t ip;
	uintptr_t func_off, module_off;
	char func[96];
	char module[64];
};

/* Names of the entries (stats.c). */
extern const char *const gfp_entry_name[GFP_ENTRY_COUNT];

/* [start, end) of addresses. */
struct gfp_range {
	uintptr_t start, end;
};

/* What an entry point's calls counted, per thread and in total. */
struct gfp_entry_stats {
	uint64_t calls, bytes, failures;
};

#pragma GCC visibility pop

#endif /* GFP_TYPES_H */
