/*
 * reserve_draw.h - reserve_draw.c: a request's draw on its thread's
 * reserves, as the budget decides it.
 */
#ifndef GFP_RESERVE_DRAW_H
#define GFP_RESERVE_DRAW_H

#include <stdint.h>

#include "thread.h"
#include "types.h"

#pragma GCC visibility push(hidden)

/* Under the budget's exact lock: how much of the thread's reserves a request
 * of `grow` bytes draws when the budget has `room` bytes under its
 * watermark, and taking it (gfp_reserve's reserve first). */
int64_t reserve_plan_draw(const struct gfp_thread *t, const struct gfp_req *req, int64_t grow,
                          int64_t room);
int64_t reserve_commit_draw(struct gfp_thread *t, int64_t draw);
/* After the lock: the draw counted, and recorded where it saved a request. */
void reserve_drawn(struct gfp_req *req, int64_t draw);

struct reserve_draws {
	uint64_t draws, drawn, thread_draws;
};
struct reserve_draws reserve_draws(void);

#pragma GCC visibility pop

#endif /* GFP_RESERVE_DRAW_H */
