/*
 * route.h - which function serves malloc, free and their kin in this
 * process: the one place that points the routes at the families
 * meaning.c chose (gfp_meaning.route) and switches them at run time
 * (route.c). The switches themselves, which modules below call, are
 * route_switch.c's.
 *
 * preload/routes.c holds the route families; preload/malloc.c's exports
 * jump through gfp_routes. Nothing here runs on a route: a route is one
 * pointer, read with one indirect jump, written only by route.c and
 * route_switch.c.
 */
#ifndef GFP_ROUTE_H
#define GFP_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "meaning.h"
#include "route_switch.h"

#pragma GCC visibility push(hidden)

/* The watched and counted families look at every answer of jemalloc's;
 * where jemalloc cannot fail a small request (route.c: no limit on the
 * address space or the data segment, overcommit allowed, and no mmap of
 * jemalloc's failed yet) route.c installs their sized forms instead, which
 * jump to jemalloc for a request of GFP_ROUTE_SURE bytes or less. */
#define GFP_ROUTE_SURE ((size_t)128 << 10)
enum route_sized_kind { ROUTE_SIZED_WATCHED, ROUTE_SIZED_COUNTED, ROUTE_SIZED_KINDS };

/* The sized forms (preload/routes.c), before route_start; without them the
 * watched and counted families serve everywhere. */
void route_sized(const struct gfp_routes sized[ROUTE_SIZED_KINDS]);

/* Called once init_ensure has read the policy (the constructor): live is what
 * the exports jump through, inner what the budget family jumps to after
 * its charge; families[k] is family k (its free: what free becomes). */
void route_start(struct gfp_routes *live, struct gfp_routes *inner,
                 const struct gfp_routes families[ROUTE_KINDS]);

/* route_start's second half, for a choice made elsewhere (the unit tests). */
void route_install(struct gfp_routes *live, struct gfp_routes *inner,
                   const struct gfp_routes families[ROUTE_KINDS], struct route_choice choice);

/* preload/oscalls.c: jemalloc may fail small requests from now on, so the
 * budget family jumps to the watched one, and the sized forms give way to
 * the watched and counted families. */
void route_watch_jemalloc(void);

#pragma GCC visibility pop

#endif
