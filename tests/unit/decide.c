/*
 * SPEC §4's decision table (steps 2 and 3) against the pure retry decision,
 * cell by cell: every base context x modifier x size class x reservation x
 * progress, under policies that move each knob (costly, retries, nofs_fail,
 * oom). Each cell drives gfp_retry_decide round by round as slowpath.c does,
 * with the OOM step stubbed by what the policy makes it answer, and compares
 * the outcome with expected(), which is written from SPEC §4 and
 * kernel-semantics.md §3, not from decide.c. The process-level table
 * (tests/slowpath/decision_table.py) stays the integration check.
 */
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "decide.h"

enum kind {
	END_FAIL,     /* NULL, the OOM step never ran */
	END_OOM_FAIL, /* the OOM step ran and gave up: NULL */
	END_DIES,     /* the OOM step ran and killed the process */
	END_LOOP,     /* loops as long as the test looks, no OOM step */
	END_OOM_LOOP, /* loops, the OOM step runs on the way */
};
static const char *const kind_name[] = {"fail", "oom+fail", "dies", "loop", "oom+loop"};

struct outcome {
	enum kind kind;
	unsigned round;     /* of the failure or the death; 0 = at entry */
	unsigned first_oom; /* rounds of the first and second OOM steps */
	unsigned second_oom;
};

struct pol {
	const char *name;
	size_t costly;
	unsigned retries;
	bool nofs_fail;
	enum gfp_oom_action oom;
	bool notifiers_free; /* oom=notify: the notifiers free something */
};

static const struct pol pols[] = {
    {"defaults", 32768, 16, false, OOM_KILL, false},
    {"oom=abort", 32768, 16, false, OOM_ABORT, false},
    {"nofs_fail=1", 32768, 16, true, OOM_KILL, false},
    {"oom=fail;retries=8", 32768, 8, false, OOM_FAIL, false},
    {"oom=wait", 32768, 16, false, OOM_WAIT, false},
    {"oom=notify (frees)", 32768, 16, false, OOM_NOTIFY, true},
    /* as oom=kill with oom_score_adj -1000: the step answers "retry" */
    {"oom=notify (frees nothing)", 32768, 16, false, OOM_NOTIFY, false},
    {"costly=1M;retries=1", 1 << 20, 1, false, OOM_KILL, false},
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
            /* modifiers that must not change the decision */
            {"NOWARN|HIGH", GFP_NOWARN | GFP_HIGH},
            {"MEMALLOC", GFP_MEMALLOC}};

/* SPEC §4 step 2, in its order, then step 3 for what loops. */
static struct outcome expected(const struct pol *p, gfp_t base, gfp_t mod, size_t size,
                               bool reserve, bool progress)
{
	unsigned R = p->retries;
	/* A reservation draws many small blocks (kernel-semantics §11): its size
	 * is never one costly request. */
	bool costly = !reserve && size > p->costly;
	bool kernel = base == GFP_KERNEL;
	if (base == GFP_NOWAIT || base == GFP_ATOMIC)
		return (struct outcome){END_FAIL, 0, 0, 0}; /* before any reclaim */
	if (mod == GFP_NORETRY)
		return (struct outcome){END_FAIL, 1, 0, 0};
	/* What a request that loops without progress meets after R rounds: the
	 * OOM step for KERNEL only (never costly, RETRY_MAYFAIL or !FS). */
	bool stuck = !progress || costly; /* the count resets only for order <= 3 */
	if (mod == GFP_NOFAIL) {
		if (!kernel || costly || !stuck || p->oom == OOM_WAIT)
			return (struct outcome){END_LOOP, 0, 0, 0};
		if (p->oom == OOM_KILL || p->oom == OOM_ABORT)
			return (struct outcome){END_DIES, R, R, 0};
		/* oom=fail cannot fail NOFAIL; freeing notifiers restart the count */
		unsigned next = p->oom == OOM_NOTIFY && p->notifiers_free ? 2 * R : R + 1;
		return (struct outcome){END_OOM_LOOP, 0, R, next};
	}
	if (costly && mod != GFP_RETRY_MAYFAIL)
		return (struct outcome){END_FAIL, 1, 0, 0};
	if (mod == GFP_RETRY_MAYFAIL)
		return stuck ? (struct outcome){END_FAIL, R, 0, 0}
		             : (struct outcome){END_LOOP, 0, 0, 0};
	/* too small to fail */
	if (!stuck)
		return (struct outcome){END_LOOP, 0, 0, 0};
	if (!kernel) /* NOFS/NOIO: no OOM step; 3.19 failed them */
		return p->nofs_fail ? (struct outcome){END_FAIL, R, 0, 0}
		                    : (struct outcome){END_LOOP, 0, 0, 0};
	switch (p->oom) {
	case OOM_WAIT:
		return (struct outcome){END_LOOP, 0, 0, 0};
	case OOM_FAIL:
		return (struct outcome){END_OOM_FAIL, R, R, 0};
	case OOM_NOTIFY:
		return (struct outcome){END_OOM_LOOP, 0, R, p->notifiers_free ? 2 * R : R + 1};
	default:
		return (struct outcome){END_DIES, R, R, 0};
	}
}

/* The slow path's loop, with the OOM step answering as the policy makes it. */
static struct outcome run(const struct pol *p, gfp_t f, size_t size, bool reserve, bool progress)
{
	struct gfp_retry_in in = {
	    .flags = f,
	    .size = size,
	    .reserve = reserve,
	    .costly = p->costly,
	    .retries = p->retries,
	    .nofs_fail = p->nofs_fail,
	    .oom = p->oom,
	};
	struct gfp_retry_out out;
	struct outcome o = {END_LOOP, 0, 0, 0};
	enum gfp_retry d = gfp_retry_decide(&in, &out);
	CHECK(d != GFP_RETRY_OOM);
	if (d == GFP_RETRY_FAIL) {
		CHECK(out.why != NULL);
		o.kind = END_FAIL;
		return o;
	}
	for (unsigned r = 1; r <= 4 * p->retries + 8; r++) {
		in.rounds = r;
		in.progress = progress;
		d = gfp_retry_decide(&in, &out);
		in.no_progress = out.no_progress;
		if (d == GFP_RETRY_OOM) {
			if (!o.first_oom)
				o.first_oom = r;
			else if (!o.second_oom)
				o.second_oom = r;
			if (p->oom == OOM_KILL || p->oom == OOM_ABORT) {
				o.kind = END_DIES;
				o.round = r;
				return o;
			}
			enum oom_result res = p->oom == OOM_FAIL  ? OOM_GIVE_UP
			                      : p->notifiers_free ? OOM_PROGRESS
			                                          : OOM_RETRY;
			d = gfp_retry_after_oom(f, res, &out);
			in.no_progress = out.no_progress;
		}
		if (d == GFP_RETRY_FAIL) {
			CHECK(out.why != NULL); /* every exit says why */
			o.kind = o.first_oom ? END_OOM_FAIL : END_FAIL;
			o.round = r;
			return o;
		}
	}
	o.kind = o.first_oom ? END_OOM_LOOP : END_LOOP;
	return o;
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
				for (size_t s = 0; s < 4; s++)
					for (int reserve = 0; reserve < 2; reserve++)
						for (int progress = 0; progress < 2; progress++) {
							gfp_t mod = mods[m].f;
							/* the no-op modifiers decide as none */
							gfp_t as =
							    mod & (GFP_NORETRY | GFP_RETRY_MAYFAIL |
							           GFP_NOFAIL);
							struct outcome e =
							    expected(p, bases[b].f, as, sizes[s],
							             reserve, progress);
							struct outcome g =
							    run(p, bases[b].f | mod, sizes[s],
							        reserve, progress);
							cells++;
							if (e.kind == g.kind &&
							    e.round == g.round &&
							    e.first_oom == g.first_oom &&
							    e.second_oom == g.second_oom)
								continue;
							fprintf(
							    stderr,
							    "%s: %s|%s size %zu%s%s: expected "
							    "%s r%u oom %u,%u, got %s r%u oom "
							    "%u,%u\n",
							    p->name, bases[b].name, mods[m].name,
							    sizes[s], reserve ? " reserve" : "",
							    progress ? " progress" : "",
							    kind_name[e.kind], e.round, e.first_oom,
							    e.second_oom, kind_name[g.kind],
							    g.round, g.first_oom, g.second_oom);
							check_failures++;
						}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%u cells in %.2f ms\n", cells,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return CHECK_DONE();
}
