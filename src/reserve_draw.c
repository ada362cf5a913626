/*
 * reserve_draw.c - how a request draws on its thread's reserves when the
 * budget decides it (reserve.c says what the reserves are): the plan and the
 * commit run under the budget's exact lock, the count and the record after
 * it. The budget calls these; they call nothing of the budget's, so that
 * reserve.c, which takes and gives back through the budget, stays above it.
 */
#include "reserve_draw.h"
#include "path.h"
#include "records.h"
#include "unwind.h"

/* For the report (reserve_report); changed only by draws. */
static struct reserve_draws counts;

/* How much of the reserve a request of `grow` bytes draws when the budget
 * has `room` bytes under its watermark. */
int64_t reserve_plan_draw(const struct gfp_thread *t, const struct gfp_req *req, int64_t grow,
                          int64_t room)
{
	int64_t avail = t->resv_left + (req->may_draw_thread ? t->thread_left : 0);
	if (avail <= 0 || grow <= 0 || req->reserve)
		return 0;
	/* Enough to end at or under the watermark (room < 0: drift left the
	 * budget over it); tokens draw the whole request even when it fits. */
	int64_t draw = grow - room;
	if (t->exact_only && draw < grow)
		draw = grow;
	if (draw <= 0)
		return 0;
	return draw < avail ? draw : avail;
}

/* Takes `draw` from the thread's reserves, gfp_reserve's first. */
int64_t reserve_commit_draw(struct gfp_thread *t, int64_t draw)
{
	int64_t from_resv = draw < t->resv_left ? draw : t->resv_left;
	t->resv_left -= from_resv;
	t->thread_left -= draw - from_resv;
	if (t->resv_left == 0)
		t->exact_only = false;
	return draw;
}

/* After the lock: count the draw; a draw that saved a request from failing
 * or looping is an event worth a record. */
void reserve_drawn(struct gfp_req *req, int64_t draw)
{
	struct gfp_thread *t = gfp_tls.thread;
	__atomic_add_fetch(&counts.draws, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&counts.drawn, (uint64_t)draw, __ATOMIC_RELAXED);
	if (req->may_draw_thread)
		__atomic_add_fetch(&counts.thread_draws, 1, __ATOMIC_RELAXED);
	if (t && t->exact_only)
		return; /* tokens: drawing is the normal case */
	if (records_on()) {
		struct gfp_frame frames[24];
		int n = unwind_capture(frames, 24);
		char extra[160];
		gfp_snprintf(extra, sizeof(extra),
		             "\"reserve\":\"%s\",\"drawn\":%lld,\"left\":%lld,\"thread_left\":%lld",
		             req->may_draw_thread ? "thread" : "reservation", (long long)draw,
		             t ? (long long)t->resv_left : 0LL,
		             t ? (long long)t->thread_left : 0LL);
		if (!req->path)
			req->path = path_of_caller();
		record_event("reserve", req, frames, n, extra);
	}
}

struct reserve_draws reserve_draws(void)
{
	return (struct reserve_draws){
	    .draws = __atomic_load_n(&counts.draws, __ATOMIC_RELAXED),
	    .drawn = __atomic_load_n(&counts.drawn, __ATOMIC_RELAXED),
	    .thread_draws = __atomic_load_n(&counts.thread_draws, __ATOMIC_RELAXED),
	};
}
