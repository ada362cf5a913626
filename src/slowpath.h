/*
 * slowpath.h - slowpath.c: attempts and the slow path.
 */
#ifndef GFP_SLOWPATH_H
#define GFP_SLOWPATH_H

#include "types.h"

#pragma GCC visibility push(hidden)

void *slowpath_attempt(struct gfp_req *req, gfp_t f);
void *slowpath_run(struct gfp_req *req) __attribute__((noinline, cold));

#pragma GCC visibility pop

#endif /* GFP_SLOWPATH_H */
