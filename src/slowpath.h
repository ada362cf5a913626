/*
 * slowpath.h - the slow path: what happens under memory pressure.
 */
#ifndef GFP_SLOWPATH_H
#define GFP_SLOWPATH_H

#include "fastpath.h"

/* Called after an attempt failed. Returns the memory, or NULL with errno set
 * to ENOMEM. Cold and out of line: nothing here is on an ordinary call. */
void *gfp_slowpath(struct gfp_req *req) __attribute__((noinline, cold));

#endif
