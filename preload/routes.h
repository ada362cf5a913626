/*
 * routes.h - the route families (routes.c, routes_profiled.c): built once
 * the policy is known, and handed to route.c, which points the exports'
 * table (shim.h: gfp_routes) at the families the policy needs.
 */
#ifndef GFP_PRELOAD_ROUTES_H
#define GFP_PRELOAD_ROUTES_H

#include "route.h"

#pragma GCC visibility push(hidden)

/* Where the budget family jumps after its charge (route.c writes it). */
extern struct gfp_routes gfp_routes_inner;

/* The constructor, once init_ensure has read the policy: route.c chooses. */
void routes_start(void);

#pragma GCC visibility pop

#endif
