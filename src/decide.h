/*
 * decide.h - the slow path's retry decision (SPEC §4 steps 2 and 3) as pure
 * functions of the request, this round and the policy's knobs.
 *
 * No globals, no thread-local state, no side effects: slowpath.c feeds them
 * what it observed and acts on the answer, and tests/unit/decide.c checks
 * SPEC §4's decision table against them without a process per cell.
 */
#ifndef GFP_DECIDE_H
#define GFP_DECIDE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

#pragma GCC visibility push(hidden)

/* What the OOM step (oom.c) answers. */
enum oom_result { OOM_RETRY, OOM_PROGRESS, OOM_GIVE_UP };

enum gfp_retry {
	GFP_RETRY_LOOP, /* wait, then another round (or, at entry, the first) */
	GFP_RETRY_FAIL, /* give up: the request returns NULL */
	GFP_RETRY_OOM,  /* run the OOM step, then gfp_retry_after_oom */
};

struct gfp_retry_in {
	gfp_t flags;          /* the resolved context */
	size_t size;          /* bytes asked for */
	bool reserve;         /* a reservation: many small blocks, never costly */
	bool progress;        /* this round's reclaim freed something */
	unsigned rounds;      /* rounds of reclaim so far, this one included; 0 at entry */
	unsigned no_progress; /* rounds without progress before this one */
	/* The policy's knobs (keys.def). */
	size_t costly;
	unsigned retries;
	bool nofs_fail;
	enum gfp_oom_action oom;
};

struct gfp_retry_out {
	unsigned no_progress; /* the count after this round */
	const char *why;      /* set when failing */
};

enum gfp_retry gfp_retry_decide(const struct gfp_retry_in *in, struct gfp_retry_out *out);
/* What the OOM step's answer means for a request of `flags`. */
enum gfp_retry gfp_retry_after_oom(gfp_t flags, enum oom_result o, struct gfp_retry_out *out);

#pragma GCC visibility pop

#endif
