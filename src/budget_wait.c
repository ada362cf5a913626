/*
 * budget_wait.c - the wait queue of requests that wait for memory
 * (wait=): a generation counter that frees bump while someone waits
 * (gfp_waiters, budget.c), and a condition to sleep on until it moves or
 * the time is up. Under limit.scope=tree the tree's (tree.c) instead.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "thread.h"
#include "tree.h"
#include "budget_wait.h"

/* The wait queue: a generation counter bumped by frees under pressure. */
static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wait_cond;
static uint64_t free_gen; /* atomic */

static void init_cond(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&wait_cond, &a);
	pthread_condattr_destroy(&a);
}

void budget_wait_init(void)
{
	static bool cond_ready;
	if (!cond_ready) {
		init_cond();
		cond_ready = true;
	}
}

uint64_t budget_wait_gen(void)
{
	if (gfp_tree_on)
		return tree_free_gen(); /* frees in every member count */
	return __atomic_load_n(&free_gen, __ATOMIC_SEQ_CST);
}

/* Called after a free under a policy when someone waits (gfp_waiters).
 * It does not flush this thread's jemalloc cache for the waiter: under a real
 * ENOMEM jemalloc crashes flushing a cache whose metadata it cannot map. */
void budget_wait_wake(void)
{
	if (gfp_tree_on)
		tree_wake();
	gfp_lock(&wait_lock);
	__atomic_add_fetch(&free_gen, 1, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&wait_cond);
	gfp_unlock(&wait_lock);
}

/* Sleeps up to `ms`, or until a free after generation `seen`. */
void budget_wait(uint64_t seen, uint64_t ms)
{
	if (ms == 0)
		return;
	if (gfp_tree_on) {
		tree_wait(seen, ms);
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	gfp_lock(&wait_lock);
	while (__atomic_load_n(&free_gen, __ATOMIC_SEQ_CST) == seen) {
		if (pthread_cond_timedwait(&wait_cond, &wait_lock, &ts) == ETIMEDOUT)
			break;
	}
	gfp_unlock(&wait_lock);
}

void budget_wait_atfork_child(void)
{
	pthread_mutex_init(&wait_lock, NULL);
	init_cond();
}
