/*
 * route_switch.h - route_switch.c: the live route table and its run-time
 * switches, which the modules below the wiring (budget.c, thread.c) flip.
 */
#ifndef GFP_ROUTE_SWITCH_H
#define GFP_ROUTE_SWITCH_H

#include <stdbool.h>
#include <stddef.h>

#include "meaning.h"

#pragma GCC visibility push(hidden)

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

/* Set by route.c as it installs the routes: the table the exports jump
 * through (preload/malloc.c's gfp_routes), the families, and the choice. */
extern struct gfp_routes *route_live;
extern struct gfp_routes route_fam[ROUTE_KINDS];
extern struct route_choice route_chosen;

/* Every route of `into` but free's. */
void route_set_alloc(struct gfp_routes *into, const struct gfp_routes *r);

/* The run-time switches, all cold. */
/* budget.c: near the watermark the shim's allocation routes, which see
 * revocations (fast: false); else the budget family's. */
void route_budget_switch(bool fast);
/* The chosen free route switches to the shim's while a free must be seen
 * (a waiter to wake, a thread past its exit under a budget): thread.c. */
extern bool route_free_switches;
void route_free_switch(bool shim);

#pragma GCC visibility pop

#endif /* GFP_ROUTE_SWITCH_H */
