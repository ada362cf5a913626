/*
 * The slow path's decisions, cell by cell: every base context x modifier
 * (NOFAIL alone and with NORETRY or RETRY_MAYFAIL too) x size class x
 * reservation x what reclaim does, under policies that move each knob
 * (costly, retries, nofs_fail, oom, the notifiers, oom_score_adj). Each
 * cell runs the engine's slow path (slowpath.c: slowpath, with decide.c)
 * against the simulated budget of slowsim.h, where nothing fits, and compares the
 * outcome, its round and the rounds of the first two OOM steps with
 * expected(), which is written from the kernel's __alloc_pages_slowpath,
 * should_reclaim_retry, __alloc_pages_may_oom and out_of_memory, not from
 * decide.c. The conditions this walk holds fixed (reserves left, inside
 * reclaim, an OOM victim, scopes) are rows of kernel.def
 * (unit_kernel_table); the process-level table is
 * tests/slowpath/decision_table.py.
 */
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "slowsim.h"

static const char *const end_name[] = {"ok", "fail", "dies", "loops", "forced"};
static const char *const reclaim_name[] = {"frees nothing, nothing reclaimable",
                                           "frees nothing, more may be reclaimable",
                                           "frees some every round"};

struct outcome {
	enum sim_end end;
	unsigned round;     /* of the end (ok, fail, dies) */
	unsigned first_oom; /* rounds of the first and second OOM steps, 0: none */
	unsigned second_oom;
};

struct pol {
	const char *name;
	size_t costly;
	unsigned retries;
	bool nofs_fail;
	enum gfp_oom_action oom;
	bool notifiers_free;
	int adj;
};

static const struct pol pols[] = {
    {"defaults", 32768, 16, false, OOM_KILL, false, 0},
    {"oom=abort", 32768, 16, false, OOM_ABORT, false, 0},
    {"nofs_fail=1", 32768, 16, true, OOM_KILL, false, 0},
    {"oom=fail;retries=8", 32768, 8, false, OOM_FAIL, false, 0},
    {"oom=wait", 32768, 16, false, OOM_WAIT, false, 0},
    {"oom=notify (notifiers free nothing)", 32768, 16, false, OOM_NOTIFY, false, 0},
    {"oom=notify (notifiers free)", 32768, 16, false, OOM_NOTIFY, true, 0},
    {"oom=kill (notifiers free)", 32768, 16, false, OOM_KILL, true, 0},
    {"oom=fail (notifiers free)", 32768, 4, false, OOM_FAIL, true, 0},
    {"oom_score_adj=-1000", 32768, 16, false, OOM_KILL, false, -1000},
    {"costly=1M;retries=1", 1 << 20, 1, false, OOM_KILL, false, 0},
};

static const struct {
	const char *name;
	gfp_t f;
} bases[] = {{"KERNEL", GFP_KERNEL},
             {"NOFS", GFP_NOFS},
             {"NOIO", GFP_NOIO},
             {"NOWAIT", GFP_NOWAIT},
             {"ATOMIC", GFP_ATOMIC}},
  mods[] = {{"", 0},
            {"NORETRY", GFP_NORETRY},
            {"RETRY_MAYFAIL", GFP_RETRY_MAYFAIL},
            {"NOFAIL", GFP_NOFAIL},
            {"NOFAIL|NORETRY", GFP_NOFAIL | GFP_NORETRY},
            {"NOFAIL|RETRY_MAYFAIL", GFP_NOFAIL | GFP_RETRY_MAYFAIL},
            /* modifiers that must not change the decision */
            {"NOWARN|HIGH", GFP_NOWARN | GFP_HIGH},
            {"MEMALLOC", GFP_MEMALLOC}};

static struct outcome end(enum sim_end e, unsigned round, unsigned first, unsigned second)
{
	return (struct outcome){e, round, first, second};
}

static struct outcome expected(const struct pol *p, gfp_t base, gfp_t mod, size_t size,
                               bool reserve, enum sim_reclaim rc)
{
	unsigned R = p->retries;
	bool costly = !reserve && size > p->costly;
	bool fs = base == GFP_KERNEL, nofail = mod & GFP_NOFAIL;
	/* No direct reclaim: nopage at once; NOFAIL only warns. */
	if (base == GFP_NOWAIT || base == GFP_ATOMIC)
		return end(END_FAIL, 0, 0, 0);
	/* should_reclaim_retry gives up on the round after R without
	 * progress, or at once when nothing is left to reclaim; progress
	 * resets the count only for order <= 3. */
	unsigned giveup = rc == RECLAIM_NOTHING ? 1 : R + 1;
	bool gives_up = costly || rc != RECLAIM_SOME;
	if (mod & GFP_NORETRY) /* nopage after one round */
		return nofail ? end(END_LOOPS, 0, 0, 0) : end(END_FAIL, 1, 0, 0);
	if (costly && !(mod & GFP_RETRY_MAYFAIL)) /* nopage after one round */
		return nofail ? end(END_LOOPS, 0, 0, 0) : end(END_FAIL, 1, 0, 0);
	if (!gives_up)
		return end(END_LOOPS, 0, 0, 0);
	/* __alloc_pages_may_oom: no OOM for costly or RETRY_MAYFAIL. */
	if (costly || (mod & GFP_RETRY_MAYFAIL))
		return nofail ? end(END_LOOPS, 0, 0, 0) : end(END_FAIL, giveup, 0, 0);
	if (!fs && p->nofs_fail && !nofail) /* Linux 3.19 */
		return end(END_FAIL, giveup, 0, 0);
	/* out_of_memory: the notifiers first. What they free makes a plain
	 * attempt fit: NOFAIL's no-watermark try gets it at once, the others
	 * on the next round. */
	unsigned oom = giveup;
	if (p->notifiers_free)
		return end(END_OK, nofail ? oom : oom + 1, oom, 0);
	/* Progress without a kill for !__GFP_FS; NOFAIL's forced progress:
	 * the count starts again. Without progress the next round gives up
	 * again. */
	unsigned again = oom + giveup, next = oom + 1;
	if (!fs)
		return end(END_LOOPS, 0, oom, again);
	switch (p->oom) {
	case OOM_KILL:
	case OOM_ABORT:
		if (p->adj > -1000)
			return end(END_DIES, oom, oom, 0);
		return end(END_LOOPS, 0, oom, nofail ? again : next);
	case OOM_FAIL:
		return nofail ? end(END_LOOPS, 0, oom, again) : end(END_FAIL, oom, oom, 0);
	default: /* wait, notify */
		return end(END_LOOPS, 0, oom, nofail ? again : next);
	}
}

static struct outcome run(const struct pol *p, gfp_t f, size_t size, bool reserve,
                          enum sim_reclaim rc)
{
	struct sim s = {
	    .flags = f,
	    .size = size,
	    .reserve = reserve,
	    .room = ROOM_NONE,
	    .reclaim = rc,
	    .notifiers_free = p->notifiers_free,
	    .costly = p->costly,
	    .retries = p->retries,
	    .nofs_fail = p->nofs_fail,
	    .oom = p->oom,
	    .adj = p->adj,
	};
	sim_run(&s);
	if (s.end == END_FAIL)
		CHECK(s.why != NULL); /* every exit says why */
	return end(s.end, s.round, s.first_oom, s.second_oom);
}

int main(void)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned cells = 0;
	for (size_t pi = 0; pi < sizeof(pols) / sizeof(pols[0]); pi++) {
		const struct pol *p = &pols[pi];
		/* below, at and just above the threshold, and far above it */
		size_t sizes[] = {1, p->costly, p->costly + 1, 64 * p->costly};
		for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
			for (size_t m = 0; m < sizeof(mods) / sizeof(mods[0]); m++)
				for (size_t si = 0; si < 4; si++)
					for (int reserve = 0; reserve < 2; reserve++)
						for (int rc = 0; rc < 3; rc++) {
							gfp_t mod = mods[m].f;
							/* the no-op modifiers decide as none */
							gfp_t as =
							    mod & (GFP_NORETRY | GFP_RETRY_MAYFAIL |
							           GFP_NOFAIL);
							struct outcome e =
							    expected(p, bases[b].f, as, sizes[si],
							             reserve, (enum sim_reclaim)rc);
							struct outcome g =
							    run(p, bases[b].f | mod, sizes[si],
							        reserve, (enum sim_reclaim)rc);
							cells++;
							if (e.end == g.end && e.round == g.round &&
							    e.first_oom == g.first_oom &&
							    e.second_oom == g.second_oom)
								continue;
							fprintf(
							    stderr,
							    "%s: %s|%s size %zu%s, reclaim %s: "
							    "expected %s r%u oom %u,%u, got %s r%u "
							    "oom %u,%u\n",
							    p->name, bases[b].name, mods[m].name,
							    sizes[si], reserve ? " reserve" : "",
							    reclaim_name[rc], end_name[e.end],
							    e.round, e.first_oom, e.second_oom,
							    end_name[g.end], g.round, g.first_oom,
							    g.second_oom);
							check_failures++;
						}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%u cells in %.2f ms\n", cells,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return CHECK_DONE();
}
