/*
 * reserve.h - reserve.c: a thread's reserves (gfp_reserve's attempt and
 * release, reserve.thread), and what the slow path asks of them.
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

void reserve_release(void);
void *reserve_attempt(struct gfp_req *req, gfp_t f);
/* reserve_take's outcome, for the report. */
void reserve_count_take(bool taken);
void reserve_thread_start(struct gfp_thread *t);
void reserve_thread_exit(struct gfp_thread *t);
void reserve_refill(struct gfp_thread *t);
bool reserve_would_loop(const struct gfp_req *req);
bool reserve_pool_may_serve(const struct gfp_thread *t, const struct gfp_req *req);
void reserve_report(struct gfp_buf *b);

#pragma GCC visibility pop

#endif /* GFP_RESERVE_H */
