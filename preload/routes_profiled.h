/*
 * routes_profiled.h - routes_profiled.c: the profiled family (stats=sites
 * alone), which routes.c builds with the others.
 */
#ifndef GFP_PRELOAD_ROUTES_PROFILED_H
#define GFP_PRELOAD_ROUTES_PROFILED_H

#include "route.h"

#pragma GCC visibility push(hidden)

/* The profiled family's functions. */
void routes_profiled(struct gfp_routes *family);

#pragma GCC visibility pop

#endif
