/*
 * pool.h - pool.c: the memory behind reserve.prefault.
 */
#ifndef GFP_POOL_H
#define GFP_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#pragma GCC visibility push(hidden)

struct gfp_pool;
int pool_add(struct gfp_pool **pp, size_t bytes);
void *pool_alloc(struct gfp_pool *p, struct gfp_req *req);
void pool_release(struct gfp_pool **pp);
void pool_atfork_child(void);
/* Requests the pools served, for the report. */
uint64_t pool_serves(void);

#pragma GCC visibility pop

#endif /* GFP_POOL_H */
