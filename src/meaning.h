/*
 * meaning.h - what the policy in force means for the process: which parts of
 * the engine are on and which route each entry takes (meaning.c). The one
 * place that reads consequences out of the keys; every module reads them
 * from gfp_meaning, none derives them again.
 */
#ifndef GFP_MEANING_H
#define GFP_MEANING_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

#pragma GCC visibility push(hidden)

/* The route families (preload/routes.c), cheapest last to be chosen. */
enum route_kind {
	ROUTE_SHIM,     /* the shim's fast path, which serves every policy */
	ROUTE_DIRECT,   /* jemalloc's own functions (and glibc's argument rules) */
	ROUTE_WATCHED,  /* jemalloc first, the policy path when it fails */
	ROUTE_COUNTED,  /* jemalloc, then the thread's counters (stats=totals) */
	ROUTE_PROFILED, /* jemalloc, then the call site's counters (stats=sites) */
	ROUTE_BUDGET,   /* the thread's allowance, then jemalloc; its free is
	                 * jemalloc's own but while a free must be seen */
	ROUTE_KINDS
};

struct route_choice {
	enum route_kind alloc; /* malloc, calloc, realloc and the aligned ones */
	enum route_kind free;
};

/* What changes a policy's meaning without being one of its keys. */
struct gfp_facts {
	bool rules;         /* GFP_RULES holds rules: they shape failing requests */
	bool records;       /* GFP_RECORD: failures and injections are recorded */
	bool other_process; /* GFP_INJECT_PID names another process: no injection */
	bool je_own;        /* jemalloc's own functions were found (backend.c) */
};

struct gfp_meaning {
	/* The policy path sees calls at all (else every thread stays idle). */
	bool active;
	/* The call path may be looked at: the unwinder and the site table are
	 * made ready (shaping, an armed fail.* key, statistics, records, junk),
	 * even where GFP_INJECT_PID leaves injection off. */
	bool unwinds;
	/* A failing request takes the slow path (else it fails as jemalloc's):
	 * a key that shapes, GFP_RULES, or injection armed here. */
	bool slowpath;
	/* The injection decision runs (armed here, or stats=paths counts
	 * through its hit table). */
	bool inject;
	/* fail.probability and nothing that changes which call fails: the
	 * fast path draws by itself (inject.h: inject_simple_candidate). */
	bool inject_simple;
	/* inject_simple, and nothing else shapes or counts: threads stay idle
	 * and count down to their next injection; frees are not seen. */
	bool armed_fast;
	bool budget;         /* limit=: every call's size is charged */
	bool thread_reserve; /* reserve.thread: frees top a thread's reserve up */
	/* reserve.mode=tokens, prefaulted, no budget: a thread's pool serves
	 * before jemalloc, which only the shim's general path knows to try. */
	bool pool_first;
	bool fill;    /* junk=: every block the policy path hands out is filled */
	bool records; /* GFP_RECORD */
	/* stats=sites: every block counted at its call site and kept in the
	 * shadow map (profile.c); read on the shim's paths, which the
	 * profiled routes leave for what they cannot count. */
	bool profile;
	/* Nothing per call but the budget and statistics: the policy path's
	 * common case (fastpath.c: fastpath_policy_alloc) may serve. */
	bool plain;
	/* A policy thread's frees may be jemalloc's alone while nobody waits:
	 * no statistics count them, no reserve is topped up by them. */
	bool free_direct_ok;
	/* The routes may leave the shim for good: jemalloc's own functions
	 * were found and no ctl=1 can bring a policy later. */
	bool fixed;
	unsigned stats; /* GFP_STATS_*: what is counted */
	/* The cheapest routes that still show the policy all it needs. */
	struct route_choice route;
};

/* The policy in force (read at start-up, changed by gfp-ctl set) and what
 * it means. */
extern struct gfp_policy gfp_policy;
extern struct gfp_meaning gfp_meaning;
/* atomic: bumped by every gfp-ctl set applied (ctl_requests.c), so that each thread
 * decides its mode again (thread_life.c: thread_enter). */
extern uint64_t gfp_policy_gen;
/* How the policy was read (init.c), facts of the process: secure execution
 * (AT_SECURE: no file, no socket, no path from the environment), and
 * GFP_STRICT (a bad setting exits 125: true, the default; or warns). */
extern bool gfp_secure;
extern bool gfp_strict;

/* Pure: what policy p means with facts f. */
struct gfp_meaning meaning_of(const struct gfp_policy *p, const struct gfp_facts *f);

#pragma GCC visibility pop

#endif /* GFP_MEANING_H */
