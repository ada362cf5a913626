/*
 * route.h - which function serves malloc, free and their kin in this
 * process: what the policy needs to see of a call (struct route_needs),
 * the one decision (route_choose), and the one place that points the
 * routes and switches them at run time (route.c).
 *
 * preload/routes.c holds the route families; preload/malloc.c's exports
 * jump through gfp_routes. Nothing here runs on a route: a route is one
 * pointer, read with one indirect jump, written only by route.c.
 */
#ifndef GFP_ROUTE_H
#define GFP_ROUTE_H

#include "internal.h"

#pragma GCC visibility push(hidden)

/* What the process's policy must see of a call: from the ROLE column
 * (keys.def) of the keys it sets, GFP_RULES and GFP_RECORD (route.c). */
struct route_needs {
	bool fixed;           /* the routes may leave the shim for good: jemalloc's
	                       * own functions were found, and no ctl=1 (CONTROL)
	                       * can bring a policy later */
	bool failures;        /* a failing request takes the slow path: SHAPE,
	                       * BUDGET or RESERVE keys, GFP_RULES, armed injection */
	bool records;         /* GFP_RECORD: failures are recorded */
	unsigned stats;       /* COUNT: stats= (GFP_STATS_*) */
	bool injections;      /* INJECT keys that arm (or stats=paths, which counts
	                       * through injection's hit table) */
	bool injections_fast; /* fail.probability alone: the shim's fast path counts
	                       * down to the next injection, frees are not seen */
	bool budget;          /* BUDGET: every call's size */
	bool thread_reserve;  /* RESERVE: a thread's reserve is topped up by frees */
	bool pool_first;      /* reserve.mode=tokens, prefaulted, no budget: only
	                       * the shim's path tries the thread's pool first */
	bool fill;            /* FILL: junk= fills every block the policy path
	                       * hands out */
};

/* The route families, cheapest last to be chosen. */
enum route_kind {
	ROUTE_SHIM,     /* the shim's fast path, which serves every policy */
	ROUTE_DIRECT,   /* jemalloc's own functions (and glibc's argument rules) */
	ROUTE_WATCHED,  /* jemalloc first, the policy path when it fails */
	ROUTE_COUNTED,  /* jemalloc, then the thread's counters (stats=totals) */
	ROUTE_PROFILED, /* jemalloc, then the call site's counters (stats=sites) */
	ROUTE_BUDGET,   /* the thread's allowance, then jemalloc; its free is
	                 * jemalloc's own but while a free must be seen */
	ROUTE_KINDS
};

/* The watched and counted families look at every answer of jemalloc's;
 * where jemalloc cannot fail a small request (route.c: no limit on the
 * address space or the data segment, overcommit allowed, and no mmap of
 * jemalloc's failed yet) route.c installs their sized forms instead, which
 * jump to jemalloc for a request of GFP_ROUTE_SURE bytes or less. */
#define GFP_ROUTE_SURE ((size_t)128 << 10)
enum route_sized_kind { ROUTE_SIZED_WATCHED, ROUTE_SIZED_COUNTED, ROUTE_SIZED_KINDS };

struct route_choice {
	enum route_kind alloc; /* malloc, calloc, realloc and the aligned ones */
	enum route_kind free;
};

/* The needs of the policy as it stands (start-up, gfp-ctl set): from the
 * roles, and equal to the flags its modules derive (tests/unit/routes.c). */
struct route_needs route_needs_now(void);
/* Pure: the cheapest routes that still show the policy all it needs. */
struct route_choice route_choose(const struct route_needs *n);

/* One function per hot entry point: a family, or the live table. */
struct gfp_routes {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
};

/* The sized forms (preload/routes.c), before route_start; without them the
 * watched and counted families serve everywhere. */
void route_sized(const struct gfp_routes sized[ROUTE_SIZED_KINDS]);

/* Called once gfp_init has read the policy (the constructor): live is what
 * the exports jump through, inner what the budget family jumps to after
 * its charge; families[k] is family k (its free: what free becomes). */
void route_start(struct gfp_routes *live, struct gfp_routes *inner,
                 const struct gfp_routes families[ROUTE_KINDS]);

/* route_start's second half, for a choice made elsewhere (the unit tests). */
void route_install(struct gfp_routes *live, struct gfp_routes *inner,
                   const struct gfp_routes families[ROUTE_KINDS], struct route_choice choice);

/* The run-time switches, all cold. */
/* budget.c: near the watermark the shim's allocation routes, which see
 * revocations (fast: false); else the budget family's. */
void route_budget_switch(bool fast);
/* The chosen free route switches to the shim's while a free must be seen
 * (a waiter to wake, a thread past its exit under a budget): thread.c. */
extern bool route_free_switches;
void route_free_switch(bool shim);
/* preload/oscalls.c: jemalloc may fail small requests from now on, so the
 * budget family jumps to the watched one, and the sized forms give way to
 * the watched and counted families. */
void route_watch_jemalloc(void);

/* init.c: reserve.mode=tokens with prefaulted pools and no budget. */
bool policy_pool_first(void);

#pragma GCC visibility pop

#endif
