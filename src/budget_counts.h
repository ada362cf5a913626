/*
 * budget_counts.h - budget_counts.c: what the budget counts, below its
 * decisions (budget.h).
 */
#ifndef GFP_BUDGET_COUNTS_H
#define GFP_BUDGET_COUNTS_H

#include <stdbool.h>
#include <stdint.h>

#include "thread.h"
#include "tree.h"

#pragma GCC visibility push(hidden)

extern bool gfp_budget_on; /* limit= is set (budget_init) */

/* What the fast path reads of the budget (budget.c explains the scheme). */
struct gfp_budget_fast {
	int64_t low_wm;     /* the lowest watermark: limit - min_free */
	int64_t batch;      /* how far a thread may drift before it folds */
	int64_t folded;     /* atomic: the shared estimate of live bytes */
	uint64_t grant_gen; /* atomic: bumped to take back every allowance */
};
extern struct gfp_budget_fast gfp_budget;
extern unsigned gfp_nr_threads; /* atomic: threads under the policy */

static inline int64_t budget_own_live(const struct gfp_thread *t)
{
	return (int64_t)(__atomic_load_n(t->allocp, __ATOMIC_RELAXED) -
	                 __atomic_load_n(t->deallocp, __ATOMIC_RELAXED));
}

void budget_thread_start(struct gfp_thread *t);

/* Folds the thread's live bytes `own` into the shared estimate. Inline:
 * the budget's exact decisions fold on every large request. */
static inline void budget_fold(struct gfp_thread *t, int64_t own)
{
	int64_t folded =
	    __atomic_add_fetch(&gfp_budget.folded, own - t->folded_own, __ATOMIC_RELAXED);
	t->folded_own = own;
	if (unlikely(gfp_tree_on))
		tree_fold(folded);
}
/* true when it counted what the thread holds into the exited threads' total. */
bool budget_thread_exit(struct gfp_thread *t);
void budget_exited_delta(int64_t delta);
int64_t budget_thread_live(const struct gfp_thread *t);
/* Live bytes exactly: the tree's under limit.scope=tree. */
int64_t budget_live(void);
/* The process's own live bytes, in a tree too. */
int64_t budget_process_live(void);

/* Memory the program maps itself (mapped.c): charged and credited apart
 * from jemalloc's counters, in the same estimate and the same exact sums.
 * budget_direct_add counts what a decision let in; budget_direct_adjust
 * charges or credits without one: what a mapping call turned out to
 * change, less what its attempt charged. */
void budget_direct_add(int64_t delta);
void budget_direct_adjust(int64_t delta);
int64_t budget_direct_live(void);
/* A forked child: its mappings charge `live` (no other thread's charge
 * is in flight there). Before the tree gives it a slot of its own. */
void budget_direct_atfork_child(int64_t live);

#pragma GCC visibility pop

#endif /* GFP_BUDGET_COUNTS_H */
