/*
 * memcg_unit - the decisions of a request that met a memory cgroup's
 * memory.max (decide.c's memcg branch: try_charge_memcg, mem_cgroup_oom),
 * run through the engine's slow path (slowpath.c) against a simulated
 * cgroup that is full and stays full unless the OOM step says otherwise
 * (tests/unit/slowsim.h), beside the same request under the page
 * allocator's rules; and the memory.high penalty (cgroup_high_delay_ms)
 * against the table in mm/memcontrol.c's comment (memory.high 100 MiB).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../unit/check.h"
#include "../unit/slowsim.h"
#include "cgroup_high.h"

/* What cgroup_high.c calls besides the slow path's world: never reached
 * by cgroup_high_delay_ms. */
__thread uint64_t gfp_memcg_over_high __attribute__((tls_model("initial-exec")));
int64_t cgroup_throttle_at(int64_t *value)
{
	*value = INT64_MAX;
	return INT64_MAX;
}
void cgroup_refresh(bool force)
{
	(void)force;
}
void vmstat_high_delay(uint64_t ns)
{
	(void)ns;
}

/* One case: the request, and whether it met memory.max. */
struct mcase {
	gfp_t flags;
	size_t size;
	bool memcg, in_reclaim, victim;
	bool progress;       /* every round of reclaim frees something */
	enum oom_result oom; /* what every OOM step answers */
};

/* The cgroup stays full: no attempt succeeds, and there is always
 * something reclaimable, so the retries run out; a request still looping
 * after 200 rounds loops for good. */
static struct sim case_run(struct mcase c)
{
	struct sim s = {
	    .flags = c.flags,
	    .size = c.size ? c.size : 4096,
	    .where = c.in_reclaim ? WHERE_RECLAIM
	             : c.victim   ? WHERE_VICTIM
	                          : WHERE_NORMAL,
	    .room = ROOM_NONE,
	    .reclaim = c.progress ? RECLAIM_SOME : RECLAIM_STUCK,
	    .memcg = c.memcg,
	    .oom_answers = true,
	    .oom_answer = c.oom,
	    .costly = 32768,
	    .retries = 16,
	    .oom = OOM_KILL,
	    .max_rounds = 200,
	};
	sim_run(&s);
	return s;
}
/* Fields of the case (.oom: what each OOM step answers, OOM_RETRY if not
 * said). */
#define CASE(...) case_run((struct mcase){__VA_ARGS__})

static void decisions(void)
{
	struct sim s;

	/* try_charge_memcg: a charge that may not block goes to nomem:
	 * NOWAIT fails, ATOMIC (HIGH) and NOWAIT|NOFAIL are forced; the page
	 * allocator fails all three. PF_MEMALLOC is forced at once. */
	s = CASE(.flags = GFP_NOWAIT, .memcg = true);
	CHECK(s.end == END_FAIL && s.rounds == 0);
	s = CASE(.flags = GFP_ATOMIC, .memcg = true);
	CHECK(s.end == END_FORCED && s.rounds == 0);
	s = CASE(.flags = GFP_ATOMIC);
	CHECK(s.end == END_FAIL);
	s = CASE(.flags = GFP_NOWAIT | GFP_NOFAIL, .memcg = true);
	CHECK(s.end == END_FORCED);
	s = CASE(.flags = GFP_KERNEL, .memcg = true, .in_reclaim = true);
	CHECK(s.end == END_FORCED && s.rounds == 0);

	/* RETRY_MAYFAIL: MAX_RECLAIM_RETRIES, then NULL, no OOM step. */
	s = CASE(.flags = GFP_KERNEL | GFP_RETRY_MAYFAIL, .memcg = true);
	CHECK(s.end == END_FAIL && s.rounds == 17 && s.ooms == 0);
	/* ... NOFAIL with it is charged past the limit (the page allocator
	 * would loop for ever). */
	s = CASE(.flags = GFP_KERNEL | GFP_NOFAIL | GFP_RETRY_MAYFAIL, .memcg = true);
	CHECK(s.end == END_FORCED && s.rounds == 17 && s.ooms == 0);
	s = CASE(.flags = GFP_KERNEL | GFP_NOFAIL | GFP_RETRY_MAYFAIL);
	CHECK(s.end == END_LOOPS);
	/* NORETRY: one round; NOFAIL with it is forced. */
	s = CASE(.flags = GFP_KERNEL | GFP_NORETRY, .memcg = true);
	CHECK(s.end == END_FAIL && s.rounds == 1);
	s = CASE(.flags = GFP_KERNEL | GFP_NORETRY | GFP_NOFAIL, .memcg = true);
	CHECK(s.end == END_FORCED && s.rounds == 1);

	/* A costly charge retries as a small one (the page allocator gives
	 * up after one round), and never reaches the OOM step. */
	s = CASE(.flags = GFP_KERNEL, .size = 65536, .memcg = true);
	CHECK(s.end == END_FAIL && s.rounds == 17 && s.ooms == 0);
	s = CASE(.flags = GFP_KERNEL, .size = 65536);
	CHECK(s.end == END_FAIL && s.rounds == 1);

	/* Progress of a small charge's reclaim does not count as a retry. */
	s = CASE(.flags = GFP_KERNEL | GFP_RETRY_MAYFAIL, .memcg = true, .progress = true);
	CHECK(s.end == END_LOOPS && s.ooms == 0);

	/* The OOM step: nobody to kill fails the charge; NOFAIL and HIGH are
	 * forced then. The page allocator's loops. */
	s = CASE(.flags = GFP_KERNEL, .memcg = true, .oom = OOM_NO_VICTIM);
	CHECK(s.end == END_FAIL && s.ooms == 1 && s.rounds == 17);
	s = CASE(.flags = GFP_KERNEL | GFP_NOFAIL, .memcg = true, .oom = OOM_NO_VICTIM);
	CHECK(s.end == END_FORCED && s.ooms == 1);
	s = CASE(.flags = GFP_KERNEL | GFP_HIGH, .memcg = true, .oom = OOM_NO_VICTIM);
	CHECK(s.end == END_FORCED && s.ooms == 1);
	s = CASE(.flags = GFP_KERNEL, .oom = OOM_NO_VICTIM);
	CHECK(s.end == END_LOOPS);
	/* oom=fail: NULL, or forced for NOFAIL. */
	s = CASE(.flags = GFP_KERNEL, .memcg = true, .oom = OOM_GIVE_UP);
	CHECK(s.end == END_FAIL && s.ooms == 1);
	s = CASE(.flags = GFP_KERNEL | GFP_NOFAIL, .memcg = true, .oom = OOM_GIVE_UP);
	CHECK(s.end == END_FORCED && s.ooms == 1);
	/* A kill gives the retries back: 16 more rounds before the next step. */
	s = CASE(.flags = GFP_KERNEL, .memcg = true, .oom = OOM_PROGRESS);
	CHECK(s.end == END_LOOPS && s.ooms >= 2);
	/* The dying process does not loop (passed_oom && task_is_dying). */
	s = CASE(.flags = GFP_KERNEL, .memcg = true, .victim = true);
	CHECK(s.end == END_FAIL && s.ooms == 1);
	s = CASE(.flags = GFP_KERNEL | GFP_NOFAIL, .memcg = true, .victim = true);
	CHECK(s.end == END_FORCED);

	/* out_of_memory: NOFS kills in a memcg OOM, not in the global one;
	 * the notifiers' progress counts in either (oom.c calls them only for
	 * the global one). */
	struct gfp_oom_in in = {.flags = GFP_NOFS, .oom = OOM_KILL, .memcg = true};
	CHECK(decide_oom_first(&in) == -1);
	CHECK(decide_oom_action(&in) == GFP_OOM_KILL);
	in.memcg = false;
	CHECK(decide_oom_first(&in) == GFP_OOM_NOFS);
	in = (struct gfp_oom_in){.flags = GFP_NOIO, .oom = OOM_KILL, .memcg = true, .tree = true};
	CHECK(decide_oom_first(&in) == -1 && decide_oom_action(&in) == GFP_OOM_TREE);
	in = (struct gfp_oom_in){.flags = GFP_KERNEL, .oom = OOM_KILL, .memcg = true, .adj = -1000};
	CHECK(decide_oom_action(&in) == GFP_OOM_UNKILLABLE);
}

/* calculate_high_delay's table for memory.high = 100 MiB, one
 * MEMCG_CHARGE_BATCH (256 KiB) charged: usage in MiB, ms. */
static void delays(void)
{
	static const struct {
		int usage;
		unsigned ms;
	} table[] = {{100, 0},    {101, 6},    {102, 25},   {103, 57},   {104, 102},
	             {105, 159},  {106, 230},  {107, 313},  {108, 409},  {109, 518},
	             {110, 639},  {111, 774},  {112, 921},  {113, 1081}, {114, 1254},
	             {115, 1439}, {116, 1638}, {117, 1849}, {118, 2000}, {120, 2000}};
	const int64_t mib = 1 << 20, batch = 256 * 1024;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		uint64_t ms = cgroup_high_delay_ms((table[i].usage - 100) * mib, 100 * mib, batch);
		int64_t d = (int64_t)ms - table[i].ms;
		if (d < -1 || d > 1) {
			fprintf(stderr, "usage %d MiB: %llu ms, the kernel %u ms\n", table[i].usage,
			        (unsigned long long)ms, table[i].ms);
			check_failures++;
		}
	}
	/* Scaled by the task's own charge, capped at 2 s per batch. */
	uint64_t half = cgroup_high_delay_ms(10 * mib, 100 * mib, batch / 2);
	CHECK(half >= 319 && half <= 320); /* the kernel's 639 * 32 / 64 */
	CHECK(cgroup_high_delay_ms(10 * mib, 100 * mib, 4 * batch) == 2000);
	CHECK(cgroup_high_delay_ms(0, 100 * mib, batch) == 0);
	CHECK(cgroup_high_delay_ms(-5, 100 * mib, batch) == 0);
	CHECK(cgroup_high_delay_ms(10 * mib, 100 * mib, 0) == 0);
	/* Hostile figures: a memory.high of 0 (one page, as the kernel's),
	 * an overage beyond any ratio, a charge beyond any batch. */
	CHECK(cgroup_high_delay_ms(mib, 0, batch) == 2000);
	CHECK(cgroup_high_delay_ms(INT64_MAX, 1, UINT64_MAX) == 2000);
	CHECK(cgroup_high_delay_ms(1, INT64_MAX, 1) == 0);
}

int main(void)
{
	decisions();
	delays();
	return CHECK_DONE();
}
