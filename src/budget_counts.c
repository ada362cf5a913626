/*
 * budget_counts.c - what the budget counts (budget.c decides with it): each
 * thread's live bytes, from jemalloc's per-thread counters, folded into the
 * shared estimate when they drift; what exited threads left; what the
 * program mapped itself (mapped.c); and their exact sum. Below the budget's
 * decisions: it never decides, takes the budget's lock or calls budget.c.
 */
#include <jemalloc/jemalloc.h>

#include "budget_counts.h"
#include "budget_wait.h"
#include "tree.h"

bool gfp_budget_on;
struct gfp_budget_fast gfp_budget;

static int64_t exited_total; /* atomic: live bytes left by exited threads */
static int64_t direct_live;  /* atomic: bytes the program mapped itself (mapped.c) */

void budget_thread_start(struct gfp_thread *t)
{
	size_t sz = sizeof(t->allocp);
	t->allocp = t->deallocp = NULL;
	/* Only under a budget: jemalloc sets up the thread's state for this
	 * mallctl, and crashes doing so when it cannot map memory. */
	if (!gfp_budget_on)
		return;
	if (mallctl("thread.allocatedp", &t->allocp, &sz, NULL, 0) != 0 ||
	    mallctl("thread.deallocatedp", &t->deallocp, &sz, NULL, 0) != 0)
		t->allocp = t->deallocp = NULL;
	t->folded_own = 0;
}

/* A thread that exits leaves its live bytes behind (another thread may free
 * them); a forked child adopts the parent's other threads' the same way. */
bool budget_thread_exit(struct gfp_thread *t)
{
	if (!t->allocp)
		return false;
	int64_t own = budget_own_live(t);
	budget_fold(t, own);
	__atomic_add_fetch(&exited_total, own, __ATOMIC_RELAXED);
	return true;
}

/* A thread past its exit (budget_thread_exit counted what it held) still
 * allocates or frees, in later key destructors: `delta` usable bytes. */
void budget_exited_delta(int64_t delta)
{
	__atomic_add_fetch(&exited_total, delta, __ATOMIC_RELAXED);
}

/* Live bytes exactly (the tree's: this process's exactly, the other
 * members' as of their last fold). */
int64_t budget_live(void)
{
	int64_t own = budget_process_live();
	return unlikely(gfp_tree_on) ? tree_live(own, NULL) : own;
}

int64_t budget_process_live(void)
{
	/* exited_total is read under the registry lock too: a thread that exits
	 * meanwhile is counted once, in the list or in the total. */
	thread_registry_lock();
	int64_t sum = __atomic_load_n(&exited_total, __ATOMIC_RELAXED);
	for (const struct gfp_thread *t = thread_first(); t; t = t->next)
		sum += budget_thread_live(t);
	thread_registry_unlock();
	return sum + __atomic_load_n(&direct_live, __ATOMIC_RELAXED);
}

int64_t budget_thread_live(const struct gfp_thread *t)
{
	return t->allocp ? budget_own_live(t) : 0;
}

/* ------------------------------------------------------------------------
 * What the program maps itself
 * ---------------------------------------------------------------------- */

void budget_direct_add(int64_t delta)
{
	__atomic_add_fetch(&direct_live, delta, __ATOMIC_RELAXED);
	int64_t folded = __atomic_add_fetch(&gfp_budget.folded, delta, __ATOMIC_RELAXED);
	if (unlikely(gfp_tree_on))
		tree_fold(folded);
}

void budget_direct_adjust(int64_t delta)
{
	if (!delta)
		return;
	budget_direct_add(delta);
	if (delta < 0 && __atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST))
		budget_wait_wake();
}

int64_t budget_direct_live(void)
{
	return __atomic_load_n(&direct_live, __ATOMIC_RELAXED);
}

/* Not published: the slot is still the parent's until tree_atfork_child. */
void budget_direct_atfork_child(int64_t live)
{
	int64_t delta = live - __atomic_exchange_n(&direct_live, live, __ATOMIC_RELAXED);
	__atomic_add_fetch(&gfp_budget.folded, delta, __ATOMIC_RELAXED);
}
