/*
 * decide.h - the slow path's decisions, as pure functions of the request,
 * where it runs (its scopes, inside reclaim, an OOM victim), this round and
 * the policy's knobs: what current_gfp_context, __gfp_pfmemalloc_flags,
 * __alloc_pages_slowpath, should_reclaim_retry, __alloc_pages_may_oom and
 * out_of_memory decide in the kernel. The loop that strings them together
 * is slowpath.c's (slowpath).
 *
 * No globals, no thread-local state, no side effects, no callbacks:
 * slowpath.c and oom.c feed them what they observed and act on the
 * answer.
 */
#ifndef GFP_DECIDE_H
#define GFP_DECIDE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

#pragma GCC visibility push(hidden)

/* ------------------------------------------------------------------------
 * current_gfp_context(): what a thread's scopes do to a request's flags.
 * A scope word holds the bits among SCOPE_CLEARS it takes away and the
 * modifiers it adds (context.c pushes and pops it).
 * ---------------------------------------------------------------------- */
#define GFP_SCOPE_BASE_BITS                                                                        \
	(GFP_DIRECT_RECLAIM_BIT | GFP_KSWAPD_RECLAIM_BIT | GFP_IO_BIT | GFP_FS_BIT)
#define GFP_SCOPE_CLEARS (GFP_IO_BIT | GFP_FS_BIT | GFP_DIRECT_RECLAIM_BIT)
#define GFP_SCOPE_MODIFIERS                                                                        \
	(GFP_NORETRY | GFP_RETRY_MAYFAIL | GFP_NOFAIL | GFP_NOWARN | GFP_HIGH | GFP_MEMALLOC |     \
	 GFP_NOMEMALLOC)

/* The scope word of a push of `flags` (before what is already set). */
unsigned decide_scope_bits(gfp_t flags);
gfp_t decide_scope_apply(gfp_t f, unsigned scope);
/* True when `scope` takes direct reclaim away and the request, context
 * ctx, kept it for being NOFAIL (the misuse warning says so). */
bool decide_scope_nofail_waits(gfp_t ctx, unsigned scope);

/* The flags of the slow path's attempts for context `ctx`: a request from
 * inside reclaim (PF_MEMALLOC) ignores the watermarks, an OOM victim's
 * (ALLOC_OOM) may use half of the reserve; NOMEMALLOC opts out of both
 * (__gfp_pfmemalloc_flags). */
gfp_t decide_attempt_flags(gfp_t ctx, bool in_reclaim, bool victim);

/* ------------------------------------------------------------------------
 * The retry decision of one round, and what the OOM step's answer means.
 * ---------------------------------------------------------------------- */

/* What the OOM step (oom.c) answers. */
enum oom_result {
	OOM_RETRY,    /* nothing changed: no progress */
	OOM_PROGRESS, /* memory came back, or will: a victim died, notifiers freed */
	OOM_GIVE_UP,  /* oom=fail */
	OOM_BUSY,     /* another thread runs the step: progress, wait (oom_lock) */
	/* A memcg OOM found nobody to kill: out_of_memory returns false, the
	 * charge goes to try_charge_memcg's nomem (elsewhere: OOM_RETRY). */
	OOM_NO_VICTIM,
};

enum gfp_retry {
	GFP_RETRY_LOOP,  /* wait, then another round (or, at entry, the first) */
	GFP_RETRY_FAIL,  /* give up: the request returns NULL */
	GFP_RETRY_OOM,   /* run the OOM step, then decide_retry_after_oom */
	GFP_RETRY_FORCE, /* memcg: charged past memory.max (try_charge_memcg's force:) */
};

struct gfp_retry_in {
	gfp_t flags;          /* the resolved context */
	size_t size;          /* bytes asked for */
	bool reserve;         /* a reservation: many small blocks, never costly */
	bool in_reclaim;      /* asked from inside reclaim (a shrinker, a notifier) */
	bool victim;          /* this process is the OOM victim, already dying */
	bool progress;        /* this round's reclaim freed something */
	bool could_reach;     /* reclaiming everything reclaimable would pass the min mark */
	bool memcg;           /* met a memory cgroup's memory.max: try_charge_memcg's rules */
	unsigned rounds;      /* rounds so far, this one included; 0 at entry */
	unsigned no_progress; /* the no-progress count before this round */
	/* The policy's knobs (keys.def). */
	size_t costly;
	unsigned retries;
	bool nofs_fail;
	enum gfp_oom_action oom;
};

struct gfp_retry_out {
	unsigned no_progress; /* the count after this round */
	/* Non-zero: one more attempt now with these flags (nopage's
	 * ALLOC_MIN_RESERVE try, the OOM step's ALLOC_NO_WATERMARKS one for
	 * NOFAIL), whatever the answer. */
	gfp_t attempt;
	const char *why; /* set when failing */
};

enum gfp_retry decide_retry_decide(const struct gfp_retry_in *in, struct gfp_retry_out *out);
enum gfp_retry decide_retry_after_oom(const struct gfp_retry_in *in, enum oom_result o,
                                   struct gfp_retry_out *out);

/* The entry check, before the first round: GFP_RETRY_FAIL (why set),
 * GFP_RETRY_FORCE (memcg) or GFP_RETRY_LOOP. */
enum gfp_retry decide_slow_entry(const struct gfp_retry_in *in, const char **why);
/* True when `extra` (a gfp_retry_out's attempt, 0 for none) is worth one
 * more attempt after a round whose attempt had flags `round`: only when it
 * reaches deeper into the reserve. */
bool decide_extra_attempt(gfp_t extra, gfp_t round);

/* ------------------------------------------------------------------------
 * out_of_memory(): what the OOM step does, in its order.
 * ---------------------------------------------------------------------- */
enum gfp_oom_do {
	GFP_OOM_FREED,      /* the notifiers freed something: progress, nobody killed */
	GFP_OOM_DYING,      /* this process is the victim already: progress, no second kill */
	GFP_OOM_NOFS,       /* !__GFP_FS: progress without a kill */
	GFP_OOM_KILL,       /* kill this process */
	GFP_OOM_ABORT,      /* abort() this process */
	GFP_OOM_TREE,       /* choose a victim among the tree's members */
	GFP_OOM_UNKILLABLE, /* oom_score_adj -1000: nobody to kill, keep looping */
	GFP_OOM_FAIL,       /* oom=fail: the request gives up */
	GFP_OOM_WAIT,       /* oom=wait, oom=notify: no kill, keep looping */
};

struct gfp_oom_in {
	gfp_t flags;
	bool victim;
	size_t freed; /* what the notifiers freed, just now */
	enum gfp_oom_action oom;
	bool tree;  /* limit.scope=tree */
	bool memcg; /* a memcg OOM: the !__GFP_FS shortcut is the global OOM's only */
	int adj;    /* this process's oom_score_adj (read for kill and abort only) */
};

/* The steps before any victim is chosen: FREED, DYING, NOFS, or -1 when
 * the action comes next. */
int decide_oom_first(const struct gfp_oom_in *in);
/* The action, once nothing before it applied. */
enum gfp_oom_do decide_oom_action(const struct gfp_oom_in *in);
/* True when the action needs oom_score_adj. */
bool decide_oom_needs_adj(enum gfp_oom_action oom);

#pragma GCC visibility pop

#endif
