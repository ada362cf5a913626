/*
 * budget.h - budget.c: limit=, watermarks, waiting for memory.
 */
#ifndef GFP_BUDGET_H
#define GFP_BUDGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "budget_counts.h"
#include "thread.h"
#include "tree.h"
#include "types.h"

#pragma GCC visibility push(hidden)

/* `limit` is the policy's (limit=cgroup: what the cgroup leaves now). */
void budget_init(int64_t limit);

/* What follows the budget from outside: limit=cgroup's figures and
 * memory.high (cgroup.c), kswapd's wake-up (kswapd.c). They read the budget
 * and sit above it, so it hears them through these, which the wiring
 * (apply.c) hands it before each budget_init. look: at a grant (far) and
 * before an exact decision (near), no lock held; NULL where nothing
 * follows, so that a grant then costs one load. marks: the watermarks
 * moved, under the budget's lock. */
struct budget_followers {
	void (*look)(bool near);
	void (*marks)(int64_t limit, int64_t min_free);
};
void budget_follow(struct budget_followers f);
int64_t budget_limit(void);
int64_t budget_capacity(void);
int64_t budget_watermark(gfp_t f);
/* min_free as the budget uses it (derived when it is not set). */
int64_t budget_min_free(void);
/* Whether the budget lets the request in under the watermark of `f`; the
 * caller allocates itself. FITS: far from the watermark (an allowance or
 * the estimate), no lock held. REFUSED: why = BUDGET, no lock held.
 * LOCKED: decided exactly, and the decision's lock is held: the caller
 * allocates now, then calls budget_end with what it got (NULL too), which
 * commits the reservation's draw the decision planned, folds the thread's
 * counters so that the next decision counts the block, and leaves the
 * lock. Nothing between the two may take a shim lock or wait. */
enum budget_verdict { BUDGET_FITS, BUDGET_REFUSED, BUDGET_LOCKED };
struct budget_exact {
	int64_t draw; /* from the thread's reservation, if the block is got */
};
enum budget_verdict budget_begin(struct gfp_req *req, gfp_t f, struct budget_exact *x);
void budget_end(struct gfp_req *req, const struct budget_exact *x, void *p);
/* limit=cgroup: a new limit, as the cgroup leaves it now (cgroup.c). */
void budget_follow_limit(int64_t limit);
/* limit.scope=tree: the limit another member set (gfp-ctl set, or
 * limit=cgroup's look at the cgroup), taken into the policy and the budget
 * (budget_init); never under the budget's lock. */
void budget_tree_sync(void);
/* route.c chose the budget family (preload/routes.c): points its allocations
 * at their own functions (route_budget_switch), from now on under the
 * budget's lock, so that budget_revoke can point them at the shim's. */
void budget_route_hook(void);
int budget_reserve(struct gfp_req *req, gfp_t f, int64_t *left);
int64_t budget_reserve_upto(int64_t *left, int64_t want);
void budget_unreserve(int64_t *left);
int64_t budget_reserved(void);

/* budget_direct_attempt is slowpath_attempt for a mapping's request
 * (req->mapping, budget_counts.h): a token when the watermark of `f` lets
 * req->size more bytes in (they are charged), NULL with why = BUDGET. */
void *budget_direct_attempt(struct gfp_req *req, gfp_t f);

/*
 * The fast path's budget check is an allowance: charge the thread may take
 * before it must look again. budget_fast_ok grants up to one batch when the
 * shared estimate, the request and every thread's possible drift (two
 * batches each) stay under the lowest watermark; frees do not give it back
 * (the next grant sees them in jemalloc's counters).
 *
 * A request is charged 2n + 8 for n bytes (with its alignment added to n):
 * no jemalloc size class is larger (8 bytes at least, at most 25 % more above
 * 16 bytes, 32 for 17), so a spent allowance bounds the usable bytes the
 * thread took, and the drift stays within a batch between two looks.
 */
#define GFP_CHARGE(n) (2 * (n) + 8)
/* Requests from here up cannot be served; their charge saturates. */
#define GFP_CHARGE_MAX ((size_t)1 << 61)

static inline size_t budget_charge(size_t size, size_t align)
{
	return size < GFP_CHARGE_MAX && align < GFP_CHARGE_MAX ? GFP_CHARGE(size + align)
	                                                       : (size_t)INT64_MAX;
}

/* The shared estimate of live bytes: the process's, or its tree's. */
static inline int64_t budget_estimate(void)
{
	return unlikely(gfp_tree_on) ? tree_estimate()
	                             : __atomic_load_n(&gfp_budget.folded, __ATOMIC_RELAXED);
}

/* Takes `charge` from the thread's allowance; false, leaving it below zero
 * (which no grant does), when the allowance does not cover it. One
 * instruction on the thread's own word, which no other thread writes: it
 * does not see a revocation (budget_allowance_take does; the budget routes
 * that call this directly are pointed away first, budget.c). A charge of
 * 2^63 or more reads as negative and passes: only the budget family
 * (preload/routes.c) makes one, by wrapping GFP_CHARGE for a request
 * jemalloc cannot serve, whose NULL then sends it to the engine, where the
 * next grant sets the allowance right again. */
static inline __attribute__((always_inline)) bool gfp_allowance_take(size_t charge)
{
#if defined(__x86_64__)
	asm goto("subq %0, %1\n\tjl %l[out]"
	         :
	         : "r"(charge), "m"(gfp_tls.budget.allowance)
	         : "cc", "memory"
	         : out);
	return true;
out:
	return false;
#else
	return __atomic_sub_fetch(&gfp_tls.budget.allowance, (int64_t)charge, __ATOMIC_RELAXED) >=
	       0;
#endif
}

/* True when `extra` bytes beyond the shared estimate certainly stay under
 * the low watermark, whatever the other threads (each within a batch or two
 * of the estimate) do meanwhile. */
static inline bool budget_clearly_fits(int64_t extra)
{
	if (unlikely(gfp_tree_on))
		return tree_clearly_fits(extra); /* the tree's estimate and threads */
	int64_t slack =
	    2 * gfp_budget.batch * (int64_t)__atomic_load_n(&gfp_nr_threads, __ATOMIC_RELAXED);
	return __atomic_load_n(&gfp_budget.folded, __ATOMIC_RELAXED) + extra + slack <=
	       __atomic_load_n(&gfp_budget.low_wm, __ATOMIC_RELAXED);
}

/* The engine's take: only from an allowance no revocation has taken back. */
static inline bool budget_allowance_take(size_t charge)
{
	if (unlikely(gfp_tls.budget.allowance_gen !=
	             __atomic_load_n(&gfp_budget.grant_gen, __ATOMIC_ACQUIRE)))
		return false;
	return gfp_allowance_take(charge);
}

/* Sets the calling thread's allowance, valid while the generation is `gen`. */
void budget_grant(int64_t amount, uint64_t gen);

/* True when a request of `charge` certainly fits under every watermark,
 * whatever the other threads do meanwhile; grants the thread the rest of a
 * batch to take without looking. */
static inline bool budget_fast_ok(struct gfp_thread *t, size_t charge)
{
	if (unlikely(!t || !t->allocp || charge > (uint64_t)gfp_budget.batch || t->exact_only))
		return false;
	/* The generation before the look: a revocation during it wins. */
	uint64_t gen = __atomic_load_n(&gfp_budget.grant_gen, __ATOMIC_ACQUIRE);
	int64_t own = budget_own_live(t), drift = own - t->folded_own;
	if (unlikely(drift > gfp_budget.batch || drift < -gfp_budget.batch)) {
		budget_fold(t, own);
		drift = 0;
	}
	if (!budget_clearly_fits(drift + (int64_t)charge))
		return false;
	/* The drift stays within a batch until the next look. */
	budget_grant(gfp_budget.batch - (drift > 0 ? drift : 0) - (int64_t)charge, gen);
	return true;
}

/* After a free while someone waits: fold at once, so that the waiter sees
 * the memory. */
static inline void budget_after_free(struct gfp_thread *t)
{
	if (unlikely(!t || !t->allocp))
		return;
	budget_fold(t, budget_own_live(t));
}
void budget_waiter_enter(void);
void budget_waiter_exit(void);
void budget_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_BUDGET_H */
