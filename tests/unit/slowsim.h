/*
 * slowsim.h - the engine's own slow path (src/slowpath.c, compiled into the
 * test with src/decide.c) run in a simulated world: what the attempts
 * reach, what reclaim frees, what the OOM step does are the world's, the
 * loop and the decisions are the engine's. The world is the functions
 * slowpath.c calls, defined here instead of the engine's (the test links
 * neither budget.c nor oom.c): include this header in exactly one file of
 * a test. Its OOM step acts as oom.c does on decide_oom_first and
 * decide_oom_action: notifiers first, then the action.
 */
#ifndef SLOWSIM_H
#define SLOWSIM_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>

#include "internal.h"
#include "budget_wait.h"
#include "cgroup.h"
#include "kswapd.h"
#include "vmstat.h"
#include "mapped.h"
#include "path.h"

/* How deep into the reserve an attempt must reach to get memory. */
enum sim_room {
	ROOM_PLAIN,    /* a plain attempt fits (after the notifiers freed) */
	ROOM_HIGH,     /* half of the reserve is left: HIGH (ALLOC_MIN_RESERVE) fits */
	ROOM_MEMALLOC, /* only attempts that ignore the watermarks fit */
	ROOM_NONE,     /* full to the limit: nothing fits */
};

/* What a round of reclaim does. */
enum sim_reclaim {
	RECLAIM_NOTHING, /* frees nothing, and nothing is left to reclaim */
	RECLAIM_STUCK,   /* frees nothing, but more may be reclaimable (no early stop) */
	RECLAIM_SOME,    /* frees something every round, never enough */
};

enum sim_where { WHERE_NORMAL, WHERE_RECLAIM, WHERE_VICTIM };

enum sim_end {
	END_OK,     /* got memory */
	END_FAIL,   /* NULL */
	END_DIES,   /* the OOM step killed (or aborted) the process */
	END_LOOPS,  /* still looping when the simulation stopped looking */
	END_FORCED, /* memcg: charged past memory.max (try_charge_memcg's force:) */
};

struct sim {
	/* The request and where it runs. */
	gfp_t flags;
	unsigned scope; /* the scope word (decide_scope_bits) */
	size_t size;
	bool reserve;
	enum sim_where where;
	/* The world. */
	enum sim_room room;
	enum sim_reclaim reclaim;
	bool notifiers_free;
	bool memcg; /* the attempts meet a memory cgroup's memory.max (limit=cgroup) */
	/* Set: every OOM step answers oom_answer, as is (oom.c's memcg
	 * answers); else the step runs decide_oom_first and decide_oom_action. */
	bool oom_answers;
	enum oom_result oom_answer;
	/* The policy. */
	size_t costly;
	unsigned retries;
	bool nofs_fail;
	enum gfp_oom_action oom;
	bool tree;
	int adj;
	unsigned max_rounds; /* a request still looping then loops for good */
	/* What happened. */
	enum sim_end end;
	unsigned round; /* of the end; 0: at entry */
	unsigned rounds;
	unsigned ooms, first_oom, second_oom, notifier_calls, forces;
	int reach;    /* of the attempt that succeeded */
	bool granted; /* the last attempt fitted: the allocation is no forced one */
	const char *why;
	jmp_buf out;
};

static struct sim *sim_now;

static int sim_reach(gfp_t f)
{
	if ((f & GFP_MEMALLOC) && !(f & GFP_NOMEMALLOC))
		return ROOM_MEMALLOC;
	return f & GFP_HIGH ? ROOM_HIGH : ROOM_PLAIN;
}

static bool sim_fits(gfp_t f)
{
	struct sim *s = sim_now;
	if (sim_reach(f) < (int)s->room)
		return false;
	s->reach = sim_reach(f);
	s->granted = true;
	return true;
}

/* ------------------------------------------------------------------------
 * What slowpath.c calls: the world
 * ---------------------------------------------------------------------- */
struct gfp_policy gfp_policy;
struct gfp_meaning gfp_meaning;
__thread struct gfp_tls gfp_tls __attribute__((tls_model("initial-exec")));
bool gfp_budget_on, gfp_cgroup_on;

static char sim_block[64];

/* jemalloc behind a budget decision that let it in, or a forced charge. */
static void *sim_je_malloc(size_t size)
{
	(void)size;
	if (!sim_now->granted)
		sim_now->forces++;
	sim_now->granted = false;
	return sim_block;
}
void *(*gfp_je_malloc)(size_t) = sim_je_malloc;

gfp_t context_resolve(struct gfp_req *req)
{
	if (!req->ctx_resolved) {
		req->gfp = decide_scope_apply(req->gfp, sim_now->scope);
		req->ctx_resolved = true;
	}
	return req->gfp;
}

/* The budget: near the watermark (as everything here is) the context
 * picks the watermark, as budget.c's exact decision does. */
enum budget_verdict budget_begin(struct gfp_req *req, gfp_t f, struct budget_exact *x)
{
	x->draw = 0;
	if (!req->ctx_resolved)
		f = context_resolve(req);
	if (sim_fits(f))
		return BUDGET_FITS;
	req->why = GFP_WHY_BUDGET;
	return BUDGET_REFUSED;
}

void budget_end(struct gfp_req *req, const struct budget_exact *x, void *p)
{
	(void)req, (void)x, (void)p;
}

void *reserve_attempt(struct gfp_req *req, gfp_t f)
{
	if (sim_fits(f)) {
		sim_now->granted = false;
		return sim_block;
	}
	req->why = GFP_WHY_BUDGET;
	return NULL;
}

/* Live bytes past every watermark: only reclaim could help. */
int64_t budget_live(void)
{
	return 1;
}

int64_t budget_watermark(gfp_t f)
{
	(void)f;
	return 0;
}

size_t reclaim_run(gfp_t ctx, size_t want, bool with_jemalloc)
{
	(void)ctx, (void)want, (void)with_jemalloc;
	return sim_now->reclaim == RECLAIM_SOME ? 4096 : 0;
}

bool reclaim_may_free_more(gfp_t ctx)
{
	(void)ctx;
	return sim_now->reclaim != RECLAIM_NOTHING;
}

bool oom_is_victim(void)
{
	return sim_now->where == WHERE_VICTIM;
}

enum oom_result oom_step(struct gfp_slow *sp)
{
	struct sim *s = sim_now;
	s->rounds = sp->rounds;
	s->ooms++;
	if (!s->first_oom)
		s->first_oom = s->rounds;
	else if (!s->second_oom)
		s->second_oom = s->rounds;
	if (s->oom_answers)
		return s->oom_answer;
	struct gfp_oom_in in = {
	    .flags = decide_scope_apply(s->flags, s->scope),
	    .victim = s->where == WHERE_VICTIM,
	    .oom = s->oom,
	    .tree = s->tree,
	};
	s->notifier_calls++;
	if (s->notifiers_free) {
		in.freed = 1 << 20;
		s->room = ROOM_PLAIN;
	}
	if (decide_oom_first(&in) >= 0)
		return OOM_PROGRESS;
	in.adj = s->adj;
	switch (decide_oom_action(&in)) {
	case GFP_OOM_KILL:
	case GFP_OOM_ABORT:
		s->end = END_DIES;
		s->round = s->rounds;
		longjmp(s->out, 1);
	case GFP_OOM_TREE: /* another member dies, its memory comes back */
		s->room = ROOM_PLAIN;
		return OOM_PROGRESS;
	case GFP_OOM_FAIL:
		return OOM_GIVE_UP;
	default:
		return OOM_RETRY;
	}
}

void canary_tick(struct gfp_slow *sp)
{
	sim_now->rounds = sp->rounds;
}

/* Between rounds: nobody else frees, so a request still looping after
 * max_rounds loops for good. */
void budget_wait(uint64_t seen, uint64_t ms)
{
	(void)seen, (void)ms;
	struct sim *s = sim_now;
	if (s->rounds >= s->max_rounds) {
		s->end = END_LOOPS;
		s->round = 0;
		longjmp(s->out, 1);
	}
}

/* Every failure passes here (nopage), with its reason. */
void canary_warn_alloc(const struct gfp_slow *sp, const char *reason)
{
	sim_now->rounds = sp->rounds;
	sim_now->why = reason;
}

/* Every success after a round passes here (gfp_meaning.profile). */
void profile_slow(struct gfp_req *req, unsigned rounds, uint64_t ns)
{
	(void)req, (void)ns;
	sim_now->rounds = rounds;
}

/* What the simulation leaves out: the canary's misuse warning, the
 * statistics, kswapd, records, reservations, mappings, injection. */
void canary_misuse(const struct gfp_slow *s, bool in_reclaim, bool scope_waived)
{
	(void)s, (void)in_reclaim, (void)scope_waived;
}
void cgroup_direct_reclaimed(const struct gfp_req *req, size_t freed)
{
	(void)req, (void)freed;
}
void kswapd_direct_reclaimed(size_t freed)
{
	(void)freed;
}
void kswapd_wake_all(gfp_t f)
{
	(void)f;
}
void vmstat_memcg_event(enum gfp_memcg_event e)
{
	(void)e;
}
void vmstat_stall(uint64_t ns)
{
	(void)ns;
}
uint64_t gfp_now_ns(void)
{
	return 0;
}
uint64_t budget_wait_gen(void)
{
	return 0;
}
void budget_waiter_enter(void)
{
}
void budget_waiter_exit(void)
{
}
bool records_on(void)
{
	return false;
}
int unwind_capture(struct gfp_frame *frames, int max)
{
	(void)frames, (void)max;
	return 0;
}
uint64_t path_of_caller(void)
{
	return 0;
}
void record_event(const char *event, const struct gfp_req *req, const struct gfp_frame *frames,
                  int n, const char *extra)
{
	(void)event, (void)req, (void)frames, (void)n, (void)extra;
}
bool reserve_pool_may_serve(const struct gfp_thread *t, const struct gfp_req *req)
{
	(void)t, (void)req;
	return false;
}
bool reserve_would_loop(const struct gfp_req *req)
{
	(void)req;
	return false;
}
void *pool_alloc(struct gfp_pool *p, struct gfp_req *req)
{
	(void)p, (void)req;
	return NULL;
}
void *budget_direct_attempt(struct gfp_req *req, gfp_t f)
{
	(void)req, (void)f;
	return NULL;
}
bool inject_should_fail(struct gfp_req *req, bool at_attempt)
{
	(void)req, (void)at_attempt;
	return false;
}

/* ------------------------------------------------------------------------
 * One request
 * ---------------------------------------------------------------------- */

/* One request, from its first attempt (the fast path's, fastpath.c:
 * policy_call, which a request from inside reclaim makes with MEMALLOC)
 * through slowpath_run to its end. */
static void sim_run(struct sim *s)
{
	bool in_reclaim = s->where == WHERE_RECLAIM;
	sim_now = s;
	s->rounds = s->ooms = s->first_oom = s->second_oom = 0;
	s->notifier_calls = s->forces = 0;
	s->granted = false;
	s->why = NULL;
	s->reach = -1;
	if (!s->max_rounds)
		s->max_rounds = 4 * s->retries + 12;
	gfp_policy.costly = (int64_t)s->costly;
	gfp_policy.retries = s->retries;
	gfp_policy.nofs_fail = s->nofs_fail;
	gfp_policy.oom = s->oom;
	gfp_meaning.slowpath = true;
	gfp_budget_on = true;
	gfp_cgroup_on = s->memcg;
	gfp_meaning.profile = true;
	gfp_tls.in_reclaim = in_reclaim;
	gfp_tls.scope = s->scope;
	gfp_tls.thread = NULL;

	struct gfp_req req = {.size = s->size, .gfp = s->flags, .reserve = s->reserve};
	if (in_reclaim) {
		context_resolve(&req);
		if (!(req.gfp & GFP_NOMEMALLOC))
			req.gfp |= GFP_MEMALLOC;
	}
	if (setjmp(s->out))
		return;
	if (slowpath_attempt(&req, req.gfp)) {
		s->end = END_OK;
		s->round = 0;
		return;
	}
	s->rounds = 0;
	void *p = slowpath_run(&req);
	s->end = !p ? END_FAIL : s->forces ? END_FORCED : END_OK;
	s->round = s->rounds;
}

#endif
