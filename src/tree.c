/*
 * tree.c - one budget for a process tree (limit.scope=tree): the segment its
 * members map, who the members are, and what budget.c asks of the tree.
 *
 * The first process creates the segment (a file of mode 0600 in /dev/shm)
 * and names it in GFP_TREE, which its children inherit; every process that
 * starts with the variable joins it, and a forked child joins as a member
 * of its own. Each member has a slot: who it is (tree_member.c), what it
 * charges against the limit, and its threads, reservations and waiters.
 * budget.c folds into the slot once per batch, as it folds its threads
 * into the process's estimate, and the segment keeps the sum: the fast
 * path never sees the segment, a grant reads four words of it, a fold
 * writes three.
 *
 * Near the watermark budget.c decides under its exact_lock and the tree's
 * robust lock, against its own exact count and the other members' last
 * folds plus what their threads may take without looking. A member that
 * exits gives its bytes back; one that dies without a word (SIGKILL, _exit
 * after fork) is found gone by the slow path (by its pid, or by the lock it
 * held, in another PID namespace) and its bytes are given back then.
 *
 * Must never: allocate (it runs inside malloc and fork handlers), or hold
 * the tree's lock across a wait.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tree.h"
#include "tree_structs.h"

static int64_t base;        /* live bytes inherited at fork: not charged */
static int32_t pub_threads; /* the thread count last published */
static uint32_t limit_seen; /* the tree's limit_gen the process took */
static bool export_env;     /* the name is new: the constructor exports it */
static int64_t batch;       /* atomic: the budget's batch, a thread's drift */
static int64_t min_free;    /* atomic: the budget's min_free */

void tree_settle(void)
{
	if (gfp_tree_on)
		tree_member_reap(true);
}

static bool join(int64_t live)
{
	pub_threads = 0;
	return tree_member_join(live);
}

/* True when no slot has a member that is still there. */
static bool no_member_left(void)
{
	struct tree_seg *s = tree_seg;
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS; i++)
		if (__atomic_load_n(&s->m[i].pid, __ATOMIC_ACQUIRE) != 0)
			return false;
	return true;
}

/* A tree whose members are all gone (a stale name): what a member killed
 * in the middle of a fold left in the sums goes, and the limit is the new
 * first process's. */
static void restart(struct tree_seg *s, int64_t limit)
{
	bool locked = tree_lock();
	if (no_member_left()) {
		__atomic_store_n(&s->charged, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->threads, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->reserved, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->waiters, 0, __ATOMIC_RELAXED);
		s->oom_slot = 0;
		for (unsigned e = 0; e < TREE_EVENTS; e++)
			__atomic_store_n(&s->events[e], 0, __ATOMIC_RELAXED);
		if (__atomic_load_n(&s->limit, __ATOMIC_RELAXED) != limit) {
			__atomic_store_n(&s->limit, limit, __ATOMIC_RELAXED);
			__atomic_add_fetch(&s->limit_gen, 1, __ATOMIC_RELEASE);
		}
	}
	if (locked)
		tree_unlock();
}

int tree_init(bool secure, char *err, size_t n)
{
	if (gfp_policy.limit_scope != GFP_SCOPE_TREE || !gfp_policy.limit)
		return 0;
	if (secure) {
		/* A setuid program does not take a budget from the environment:
		 * its own, as limit.scope=process. */
		gfp_log(GFP_LOG_WARNING, "limit.scope=tree: ignored in secure execution (setuid); "
		                         "this process has a budget of its own");
		return 0;
	}
	tree_member_self_init(false);
	int r = tree_seg_open(err, n, &export_env);
	if (r != 0)
		return r;
	struct tree_seg *s = tree_seg;
	/* A tree whose members are all gone starts again with this process's
	 * limit; a live one keeps its own (gfp-ctl set changes it). */
	tree_member_reap(true);
	/* limit=cgroup: the cgroup's figures make the limit, once it is found
	 * (cgroup_resolve_policy publishes it). */
	bool cgroup = gfp_policy.limit == GFP_SIZE_WORD;
	int64_t mine = cgroup ? 0 : (int64_t)gfp_policy.limit,
	        theirs = __atomic_load_n(&s->limit, __ATOMIC_RELAXED);
	if (no_member_left()) {
		restart(s, mine);
	} else if (theirs != mine && !cgroup) {
		char a[GFP_HUMAN_LEN], b[GFP_HUMAN_LEN], q[PATH_MAX + 64];
		gfp_log(
		    GFP_LOG_WARNING,
		    "limit=%s: the tree (GFP_TREE='%s') has limit=%s, which applies (gfp-ctl set "
		    "limit= through any member changes it)",
		    gfp_human_size(a, mine), gfp_quote(q, sizeof(q), tree_path, strlen(tree_path)),
		    gfp_human_size(b, theirs));
		gfp_policy.limit = (uint64_t)theirs;
	}
	limit_seen = __atomic_load_n(&s->limit_gen, __ATOMIC_ACQUIRE);
	if (!join(0)) {
		gfp_log(GFP_LOG_WARNING,
		        "limit.scope=tree: the tree has %d members already; this process has a "
		        "budget of its own",
		        TREE_MEMBERS);
		return 0;
	}
	gfp_tree_on = true;
	return 0;
}

void tree_export_env(void)
{
	if (gfp_tree_on && export_env)
		setenv("GFP_TREE", tree_path, 1);
	export_env = false;
}

void tree_atfork_child(int64_t own)
{
	if (!gfp_tree_on)
		return;
	tree_member_self_init(true); /* a parent may have made a PID namespace for it */
	/* The parent's slot stays the parent's; the child starts with a slot
	 * of its own, charged for nothing it inherited. The allowance it
	 * inherited was granted against the parent's share. */
	__atomic_store_n(&tree_me, NULL, __ATOMIC_RELAXED);
	base = own;
	gfp_tls.budget.allowance = 0;
	if (!join(own)) {
		gfp_tree_on = false;
		gfp_log(GFP_LOG_WARNING,
		        "limit.scope=tree: the tree has %d members already; this child has a "
		        "budget of its own",
		        TREE_MEMBERS);
	}
}

void tree_exit(void)
{
	struct tree_member *m = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	/* A vfork child shares its parent's memory, and its slot with it. */
	if (m && __atomic_load_n(&m->pid, __ATOMIC_RELAXED) == getpid())
		tree_leave();
}

void tree_leave(void)
{
	if (!tree_member_depart())
		return;
	/* The last member takes the name along; a member killed last leaves
	 * it, and the next process that names it starts the tree again (or a
	 * new tree of the user sweeps it away). While another member's pid is
	 * there this is not the last: no /proc reads at every worker's exit. */
	uint32_t high = __atomic_load_n(&tree_seg->high, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS; i++) {
		int32_t other = __atomic_load_n(&tree_seg->m[i].pid, __ATOMIC_ACQUIRE);
		if (other < 0 || (other > 0 && !tree_member_left(i, other, false)))
			return;
	}
	tree_member_reap(true);
	if (no_member_left())
		unlink(tree_path);
}

/* ------------------------------------------------------------------------
 * What budget.c asks
 * ---------------------------------------------------------------------- */

void tree_budget_marks(int64_t b, int64_t m)
{
	__atomic_store_n(&batch, b, __ATOMIC_RELAXED);
	__atomic_store_n(&min_free, m, __ATOMIC_RELAXED);
}

/* Publishes what the process charges now (from its live bytes `live`). */
static void publish(struct tree_member *m, int64_t live)
{
	int64_t c = live > base ? live - base : 0;
	int64_t old = __atomic_exchange_n(&m->charged, c, __ATOMIC_RELAXED);
	tree_add64(&tree_seg->charged, c - old);
	__atomic_store_n(&m->live, live, __ATOMIC_RELAXED);
	if (c < old && __atomic_load_n(&tree_seg->waiters, __ATOMIC_RELAXED))
		tree_wake();
}

void tree_fold(int64_t folded)
{
	struct tree_member *m = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	if (m)
		publish(m, folded);
}

/* The process's threads under the policy, each of which may drift. */
static void publish_threads(struct tree_member *m)
{
	int32_t n = (int32_t)__atomic_load_n(&gfp_nr_threads, __ATOMIC_RELAXED);
	if (likely(n == __atomic_load_n(&pub_threads, __ATOMIC_RELAXED)))
		return;
	__atomic_store_n(&pub_threads, n, __ATOMIC_RELAXED);
	tree_add64(&tree_seg->threads, n - __atomic_exchange_n(&m->threads, n, __ATOMIC_RELAXED));
}

bool tree_clearly_fits(int64_t extra)
{
	struct tree_seg *s = tree_seg;
	struct tree_member *m = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	if (m)
		publish_threads(m);
	int64_t threads = __atomic_load_n(&s->threads, __ATOMIC_RELAXED);
	if (threads < 1)
		threads = 1;
	int64_t slack = 2 * __atomic_load_n(&batch, __ATOMIC_RELAXED) * threads;
	/* The tree's limit as it is now, even before this process took it
	 * (budget_tree_sync): a lowered one holds at once. */
	int64_t wm = __atomic_load_n(&s->limit, __ATOMIC_RELAXED) -
	             __atomic_load_n(&min_free, __ATOMIC_RELAXED) -
	             __atomic_load_n(&s->reserved, __ATOMIC_RELAXED);
	return __atomic_load_n(&s->charged, __ATOMIC_RELAXED) + extra + slack <= wm;
}

int64_t tree_live(int64_t own, int64_t *others_slack)
{
	struct tree_seg *s = tree_seg;
	tree_member_reap(false);
	struct tree_member *me = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	int64_t sum = 0, slack = 0;
	if (me) {
		publish(me, own);
		publish_threads(me);
	} else {
		sum = own > base ? own - base : 0; /* past tree_leave: still its own */
	}
	/* The slots, not the sum of folds: a member killed between the two
	 * writes of a fold leaves that sum off, never its slot. */
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS; i++) {
		const struct tree_member *m = &s->m[i];
		if (__atomic_load_n(&m->pid, __ATOMIC_ACQUIRE) <= 0)
			continue;
		sum += __atomic_load_n(&m->charged, __ATOMIC_RELAXED);
		if (m != me)
			slack += 2 * __atomic_load_n(&batch, __ATOMIC_RELAXED) *
			         __atomic_load_n(&m->threads, __ATOMIC_RELAXED);
	}
	if (others_slack)
		*others_slack = slack;
	return sum;
}

int64_t tree_estimate(void)
{
	return __atomic_load_n(&tree_seg->charged, __ATOMIC_RELAXED);
}

int64_t tree_reserved(void)
{
	return __atomic_load_n(&tree_seg->reserved, __ATOMIC_RELAXED);
}

void tree_reserved_add(int64_t delta)
{
	struct tree_member *m = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	if (!m)
		return; /* not the tree's: nobody could give it back */
	tree_add64(&m->reserved, delta);
	tree_add64(&tree_seg->reserved, delta);
}

bool tree_limit_news(int64_t *limit)
{
	uint32_t gen = __atomic_load_n(&tree_seg->limit_gen, __ATOMIC_ACQUIRE);
	if (likely(gen == __atomic_load_n(&limit_seen, __ATOMIC_RELAXED)))
		return false;
	__atomic_store_n(&limit_seen, gen, __ATOMIC_RELAXED);
	*limit = tree_limit();
	return true;
}

void tree_limit_set(int64_t limit)
{
	struct tree_seg *s = tree_seg;
	if (limit == tree_limit())
		return;
	bool locked = tree_lock();
	__atomic_store_n(&s->limit, limit, __ATOMIC_RELAXED);
	__atomic_store_n(&limit_seen, __atomic_add_fetch(&s->limit_gen, 1, __ATOMIC_RELEASE),
	                 __ATOMIC_RELAXED);
	if (locked)
		tree_unlock();
	tree_wake(); /* a raised limit: every member's waiting requests try again */
}

void tree_limit_follow(int64_t limit)
{
	struct tree_seg *s = tree_seg;
	int64_t old = __atomic_exchange_n(&s->limit, limit, __ATOMIC_RELAXED);
	if (old == limit)
		return;
	__atomic_store_n(&limit_seen, __atomic_add_fetch(&s->limit_gen, 1, __ATOMIC_RELEASE),
	                 __ATOMIC_RELAXED);
	if (limit > old)
		tree_wake(); /* the cgroup left more room: waiting requests try again */
}

int64_t tree_others_charged(void)
{
	struct tree_member *m = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	int64_t all = tree_estimate(),
	        mine = m ? __atomic_load_n(&m->charged, __ATOMIC_RELAXED) : 0;
	return all > mine ? all - mine : 0;
}

void tree_memcg_event(unsigned e)
{
	if (e < TREE_EVENTS)
		__atomic_add_fetch(&tree_seg->events[e], 1, __ATOMIC_RELAXED);
}

bool tree_memcg_events(uint64_t *out, unsigned n)
{
	if (!gfp_tree_on)
		return false;
	for (unsigned e = 0; e < n; e++)
		out[e] =
		    e < TREE_EVENTS ? __atomic_load_n(&tree_seg->events[e], __ATOMIC_RELAXED) : 0;
	return true;
}

/* ------------------------------------------------------------------------
 * The OOM report's dump_tasks
 * ---------------------------------------------------------------------- */

void tree_oom_dump_tasks(struct gfp_buf *b, const char *prefix)
{
	struct tree_seg *s = tree_seg;
	char q[PATH_MAX + 64];
	gfp_buf_printf(b,
	               "\n%sTasks state (members of the tree %s; memory in binary units):", prefix,
	               gfp_quote(q, sizeof(q), tree_path, strlen(tree_path)));
	gfp_buf_printf(b, "\n%s[  pid  ] threads       live    charged oom_score_adj name", prefix);
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE), shown = 0, more = 0;
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS; i++) {
		const struct tree_member *m = &s->m[i];
		int32_t pid = __atomic_load_n(&m->pid, __ATOMIC_ACQUIRE);
		if (pid <= 0)
			continue;
		if (shown == 48) { /* the report is one 8 KiB message */
			more++;
			continue;
		}
		struct tree_seen seen;
		char at[16] = "?", h[2][GFP_HUMAN_LEN];
		/* Its pid here; one this process cannot see is named by its
		 * pid in its own namespace, which may be another process's
		 * here. */
		if (tree_member_see(i, pid, __atomic_load_n(&m->gen, __ATOMIC_RELAXED), false,
		                    &seen))
			gfp_snprintf(at, sizeof(at), "%d", (int)seen.pid);
		gfp_buf_printf(b, "\n%s[%7s] %7d %10s %10s %13d %s", prefix, at,
		               (int)__atomic_load_n(&m->threads, __ATOMIC_RELAXED),
		               gfp_human_size(h[0], __atomic_load_n(&m->live, __ATOMIC_RELAXED)),
		               gfp_human_size(h[1], __atomic_load_n(&m->charged, __ATOMIC_RELAXED)),
		               seen.adj, gfp_quote(q, sizeof(q), seen.comm, strlen(seen.comm)));
		if (!seen.pid)
			gfp_buf_printf(b, " (pid %d in another PID namespace)", (int)pid);
		shown++;
	}
	if (more)
		gfp_buf_printf(b, "\n%s... and %u more members", prefix, more);
}
