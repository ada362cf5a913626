/*
 * tree_state.c - what every tree file shares (limit.scope=tree): the
 * segment this process maps and its member's slot there, the tree's robust
 * lock and its wait queue, and the limit as the segment holds it. The
 * lowest of the tree's files: tree_member.c, tree_seg.c, tree.c and
 * tree_oom.c build on it.
 *
 * Must never call into the other tree files or the budget, allocate (it
 * runs inside malloc and fork handlers), or hold the tree's lock across a
 * wait.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "tree_structs.h"

bool gfp_tree_on;
struct tree_seg *tree_seg;
struct tree_member *tree_me; /* atomic: NULL once the process has left */
char tree_path[PATH_MAX];

#define TREE_LOCK_MS 2000 /* the longest wait for the tree's lock */

int64_t tree_limit(void)
{
	return __atomic_load_n(&tree_seg->limit, __ATOMIC_RELAXED);
}

/* Robust: a member killed while it held the lock leaves nothing half done
 * that matters (the sums are atomics), so the next owner goes on. */
static bool taken(int r)
{
	if (r == EOWNERDEAD)
		pthread_mutex_consistent(&tree_seg->lock);
	return r == 0 || r == EOWNERDEAD;
}

bool tree_trylock(void)
{
	return taken(pthread_mutex_trylock(&tree_seg->lock));
}

bool tree_lock(void)
{
	/* One stopped while it held it (SIGSTOP, a frozen cgroup) would stop
	 * the whole tree: after TREE_LOCK_MS the decision is made without it,
	 * which at worst lets two members take the same last bytes. */
	int r = pthread_mutex_trylock(&tree_seg->lock);
	if (r == EBUSY) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += TREE_LOCK_MS / 1000;
		r = pthread_mutex_timedlock(&tree_seg->lock, &until);
	}
	if (taken(r))
		return true;
	static bool told;
	if (!__atomic_exchange_n(&told, true, __ATOMIC_RELAXED))
		gfp_log(GFP_LOG_WARNING,
		        "limit.scope=tree: the tree's lock was held for more than %d s (a member "
		        "stopped?): deciding without it",
		        TREE_LOCK_MS / 1000);
	return false;
}

void tree_unlock(void)
{
	pthread_mutex_unlock(&tree_seg->lock);
}

/* ------------------------------------------------------------------------
 * The wait queue: a futex in the segment, shared by every member
 * ---------------------------------------------------------------------- */

void tree_waiter(int delta)
{
	struct tree_member *m = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	if (m)
		__atomic_add_fetch(&m->waiters, delta, __ATOMIC_RELAXED);
	__atomic_add_fetch(&tree_seg->waiters, (uint32_t)delta, __ATOMIC_RELAXED);
}

uint64_t tree_free_gen(void)
{
	return __atomic_load_n(&tree_seg->free_gen, __ATOMIC_SEQ_CST);
}

void tree_wake(void)
{
	int saved = errno;
	__atomic_add_fetch(&tree_seg->free_gen, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &tree_seg->free_gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	errno = saved;
}

void tree_wait(uint64_t seen, uint64_t ms)
{
	int saved = errno;
	uint64_t end = gfp_now_ns() + ms * 1000000;
	for (;;) {
		uint32_t cur = __atomic_load_n(&tree_seg->free_gen, __ATOMIC_SEQ_CST);
		uint64_t now = gfp_now_ns();
		if (cur != (uint32_t)seen || now >= end)
			break;
		struct timespec ts = {(time_t)((end - now) / 1000000000),
		                      (long)((end - now) % 1000000000)};
		/* Not FUTEX_PRIVATE: the word is in memory other processes map. */
		if (syscall(SYS_futex, &tree_seg->free_gen, FUTEX_WAIT, cur, &ts, NULL, 0) != 0 &&
		    errno == ETIMEDOUT)
			break;
	}
	errno = saved;
}
