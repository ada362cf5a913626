/*
 * reserve.h - reserve.c: gfp_reserve, reserve.thread; pool.c: reserve.prefault.
 */
#ifndef GFP_RESERVE_H
#define GFP_RESERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "thread.h"
#include "types.h"

#pragma GCC visibility push(hidden)

struct gfp_pool;
int reserve_take(size_t bytes, gfp_t flags);
void reserve_release(void);
void *reserve_attempt(struct gfp_req *req, gfp_t f);
int64_t reserve_plan_draw(const struct gfp_thread *t, const struct gfp_req *req, int64_t grow,
                          int64_t room);
int64_t reserve_commit_draw(struct gfp_thread *t, int64_t draw);
void reserve_drawn(struct gfp_req *req, int64_t draw);
void reserve_thread_start(struct gfp_thread *t);
void reserve_thread_exit(struct gfp_thread *t);
void reserve_refill(struct gfp_thread *t);
bool reserve_would_loop(const struct gfp_req *req);
bool reserve_pool_may_serve(const struct gfp_thread *t, const struct gfp_req *req);
void reserve_pool_served(void);
void reserve_report(struct gfp_buf *b);
int pool_add(struct gfp_pool **pp, size_t bytes);
void *pool_alloc(struct gfp_pool *p, struct gfp_req *req);
void pool_release(struct gfp_pool **pp);
void pool_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_RESERVE_H */
