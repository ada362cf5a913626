/*
 * slowsim.h - the slow path's loop (decide.c: decide_slow_loop) driven against
 * a simulated budget, for the unit tests: what the attempts reach, what
 * reclaim frees, what the OOM step does are the world's, the decisions are
 * the code's. The OOM step acts as oom.c does on decide_oom_first and
 * decide_oom_action: notifiers first, then the action.
 */
#ifndef SLOWSIM_H
#define SLOWSIM_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>

#include "decide.h"

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
	END_OK,    /* got memory */
	END_FAIL,  /* NULL */
	END_DIES,  /* the OOM step killed (or aborted) the process */
	END_LOOPS, /* still looping when the simulation stopped looking */
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
	unsigned rounds, no_progress;
	unsigned ooms, first_oom, second_oom, notifier_calls;
	int reach; /* of the attempt that succeeded */
	const char *why;
	jmp_buf out;
};

static int sim_reach(gfp_t f)
{
	if ((f & GFP_MEMALLOC) && !(f & GFP_NOMEMALLOC))
		return ROOM_MEMALLOC;
	return f & GFP_HIGH ? ROOM_HIGH : ROOM_PLAIN;
}

static bool sim_try(struct sim *s, gfp_t f)
{
	if (sim_reach(f) < (int)s->room)
		return false;
	s->reach = sim_reach(f);
	return true;
}

static void sim_round_begin(void *c)
{
	(void)c;
}

static size_t sim_reclaim(void *c)
{
	return ((struct sim *)c)->reclaim == RECLAIM_SOME ? 4096 : 0;
}

static bool sim_attempt(void *c, gfp_t f)
{
	return sim_try(c, f);
}

static bool sim_could_reach(void *c, gfp_t f)
{
	(void)f;
	return ((struct sim *)c)->reclaim != RECLAIM_NOTHING;
}

static bool sim_victim(void *c)
{
	return ((struct sim *)c)->where == WHERE_VICTIM;
}

static enum oom_result sim_oom(void *c)
{
	struct sim *s = c;
	s->ooms++;
	if (!s->first_oom)
		s->first_oom = s->rounds;
	else if (!s->second_oom)
		s->second_oom = s->rounds;
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

static void sim_wait(void *c)
{
	struct sim *s = c;
	if (s->rounds >= s->max_rounds) {
		s->end = END_LOOPS;
		s->round = 0;
		longjmp(s->out, 1);
	}
}

static const struct gfp_slow_ops sim_ops = {
    .round_begin = sim_round_begin,
    .reclaim = sim_reclaim,
    .attempt = sim_attempt,
    .could_reach = sim_could_reach,
    .victim = sim_victim,
    .oom = sim_oom,
    .wait = sim_wait,
};

/* One request, from its first attempt (the fast path's, which a request
 * from inside reclaim makes with MEMALLOC) to its end. */
static void sim_run(struct sim *s)
{
	gfp_t ctx = decide_scope_apply(s->flags, s->scope);
	bool in_reclaim = s->where == WHERE_RECLAIM;
	s->rounds = s->no_progress = s->ooms = s->first_oom = s->second_oom = 0;
	s->notifier_calls = 0;
	s->why = NULL;
	s->reach = -1;
	if (!s->max_rounds)
		s->max_rounds = 4 * s->retries + 12;
	if (sim_try(s, in_reclaim && !(ctx & GFP_NOMEMALLOC) ? ctx | GFP_MEMALLOC : ctx)) {
		s->end = END_OK;
		s->round = 0;
		return;
	}
	struct gfp_retry_in in = {
	    .flags = ctx,
	    .size = s->size,
	    .reserve = s->reserve,
	    .in_reclaim = in_reclaim,
	    .costly = s->costly,
	    .retries = s->retries,
	    .nofs_fail = s->nofs_fail,
	    .oom = s->oom,
	};
	if (decide_slow_entry(&in, &s->why) == GFP_RETRY_FAIL) {
		s->end = END_FAIL;
		s->round = 0;
		return;
	}
	if (setjmp(s->out))
		return;
	bool ok = decide_slow_loop(&sim_ops, s, &in, &s->rounds, &s->no_progress, &s->why);
	s->end = ok ? END_OK : END_FAIL;
	s->round = s->rounds;
}

#endif
