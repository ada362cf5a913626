/*
 * tree_oom.c - the OOM step across a process tree (limit.scope=tree,
 * oom=kill): the kernel's select_bad_process over the tree's members,
 * oom_kill_process, and the wait for the victim's memory.
 *
 * The victim is the member with the highest oom_badness: its live bytes
 * (what it inherited at fork included, as the kernel counts a child's rss)
 * plus oom_score_adj * limit / 1000; -1000 is never chosen. Only a member
 * the requester can prove is that member (tree_member.c) is a candidate: a
 * pid alone proves nothing across PID namespaces, so a member in one the
 * requester cannot see into is never chosen, nor its own namespace's init,
 * which takes no signal from inside. The requester kills the victim
 * through a pidfd proven to be it (SIGKILL; itself when it is the victim)
 * and waits, at most oom.victim_timeout, for its memory to come back: for
 * the process to be gone or a zombie, whose memory the kernel has taken
 * back, and its slot emptied. Meanwhile no other member's request kills a
 * second victim: they wait for the same one (the kernel's oom_lock, and its
 * scan that aborts while a victim is still exiting). A victim that
 * outlives the timeout (one
 * stopped where SIGKILL cannot reach it, like a task in D state that the
 * oom_reaper cannot reap) is skipped from then on, as MMF_OOM_SKIP does,
 * and the next victim is chosen (the LWN "too small to fail" proposal,
 * rather than a deadlock).
 *
 * Under limit=cgroup the step is a memcg OOM (mem_cgroup_out_of_memory):
 * the tree's members are the cgroup's tasks it can name. A search that
 * finds nobody to kill gives up (out_of_memory returns false, and
 * try_charge_memcg fails the charge) rather than loops; with
 * memory.oom.group set, every member the requester can prove is killed
 * with the victim (mem_cgroup_get_oom_group, oom_kill_memcg_member: not
 * those of oom_score_adj -1000), the requester itself last.
 *
 * Never holds the tree's lock across a kill or a wait.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "vmstat.h"
#include "oom_report.h"
#include "sys.h"
#include "tree.h"
#include "tree_structs.h"

struct victim {
	uint32_t i, gen; /* its slot, and which member of it */
	int32_t pid;     /* the slot's: in the member's own PID namespace */
	bool self;
	struct tree_seen seen; /* its pid here (0: not seen), a proven pidfd */
	uint64_t deadline_ns, killed_ns;
	int64_t live, charged;
	int adj;
};

enum pick { PICK_NONE, PICK_NEW, PICK_WAIT };

/* Slot i's member into v; with `prove`, false unless it may be signalled
 * (v->seen.pidfd proven to be it, or it is this process). */
static bool victim_from(struct victim *v, uint32_t i, int32_t pid, uint32_t gen, bool prove)
{
	struct tree_member *m = &tree_seg->m[i];
	v->i = i;
	v->gen = gen;
	v->pid = pid;
	v->self = m == __atomic_load_n(&tree_me, __ATOMIC_RELAXED);
	v->live = __atomic_load_n(&m->live, __ATOMIC_RELAXED);
	v->charged = __atomic_load_n(&m->charged, __ATOMIC_RELAXED);
	bool seen = tree_member_see(i, pid, gen, prove, &v->seen);
	v->adj = v->seen.adj;
	return seen && (!prove || v->self || v->seen.pidfd >= 0);
}

/* "PID (comm)" of the victim: its pid here, or in its own namespace. */
static const char *who(char *out, size_t n, const struct victim *v)
{
	char q[64];
	gfp_quote(q, sizeof(q), v->seen.comm, strlen(v->seen.comm));
	if (v->seen.pid)
		gfp_snprintf(out, n, "%d (%s)", (int)v->seen.pid, q);
	else
		gfp_snprintf(out, n, "%d (%s) of another PID namespace", (int)v->pid, q);
	return out;
}

/* Under the lock: the victim killed by some member whose time is up. */
static void skip_victim(const struct victim *v, uint64_t now)
{
	struct tree_seg *s = tree_seg;
	char name[128], h[GFP_HUMAN_LEN];
	__atomic_or_fetch(&s->m[v->i].flags, TREE_OOM_SKIP, __ATOMIC_RELAXED);
	gfp_log(GFP_LOG_WARNING,
	        "oom: process %s still holds %s %u ms after it was killed "
	        "(oom.victim_timeout=%ums): choosing the next victim",
	        who(name, sizeof(name), v),
	        gfp_human_size(h, __atomic_load_n(&s->m[v->i].charged, __ATOMIC_RELAXED)),
	        (unsigned)((now - s->oom_killed_ns) / 1000000),
	        (unsigned)gfp_policy.oom_victim_timeout);
}

bool tree_oom_badness(int64_t live, int adj, int64_t limit, int64_t *points)
{
	if (adj <= -1000)
		return false; /* OOM_SCORE_ADJ_MIN: never */
	/* oom_badness: rss + oom_score_adj * totalpages / 1000, the tree's
	 * limit being all the memory there is. */
	*points = live + adj * (limit / 1000);
	return true;
}

/* The member of highest badness that this process may signal, not in
 * `passed`; false when there is none. */
static bool best_member(int self_adj, const uint64_t *passed, uint32_t *bi, int32_t *bpid,
                        uint32_t *bgen)
{
	struct tree_seg *s = tree_seg;
	struct tree_member *me = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	int64_t limit = tree_limit(), best_points = 0, points;
	bool found = false;
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS; i++) {
		struct tree_member *m = &s->m[i];
		int32_t pid = __atomic_load_n(&m->pid, __ATOMIC_ACQUIRE);
		if (pid <= 0 || (__atomic_load_n(&m->flags, __ATOMIC_RELAXED) & TREE_OOM_SKIP) ||
		    (passed[i / 64] >> (i % 64) & 1))
			continue;
		uint32_t gen = __atomic_load_n(&m->gen, __ATOMIC_RELAXED);
		struct tree_seen seen;
		/* A member it cannot prove is that member (a namespace this
		 * process cannot see into) is not its to kill; nor its
		 * namespace's init, which ignores signals from inside. */
		if (!tree_member_see(i, pid, gen, false, &seen) || (m != me && seen.pid == 1))
			continue;
		int adj = m == me ? self_adj : seen.adj;
		if (!tree_oom_badness(__atomic_load_n(&m->live, __ATOMIC_RELAXED), adj, limit,
		                      &points))
			continue;
		if (!found || points > best_points) {
			found = true;
			best_points = points;
			*bi = i;
			*bpid = pid;
			*bgen = gen;
		}
	}
	return found;
}

/* select_bad_process: the victim being waited for, or a new one (the
 * member of highest badness), or none left that may be chosen. */
static enum pick pick(struct victim *v, int self_adj)
{
	struct tree_seg *s = tree_seg;
	enum pick r = PICK_NONE;
	bool locked = tree_lock();
	tree_member_reap(true);
	uint64_t now = gfp_now_ns();
	if (s->oom_slot) {
		uint32_t i = s->oom_slot - 1;
		int32_t pid = __atomic_load_n(&s->m[i].pid, __ATOMIC_ACQUIRE);
		if (pid > 0 && __atomic_load_n(&s->m[i].gen, __ATOMIC_RELAXED) == s->oom_gen) {
			victim_from(v, i, pid, s->oom_gen, false);
			v->deadline_ns = s->oom_deadline_ns;
			v->killed_ns = s->oom_killed_ns;
			if (now < s->oom_deadline_ns) {
				if (locked)
					tree_unlock();
				return PICK_WAIT;
			}
			skip_victim(v, now);
		}
		s->oom_slot = 0;
	}
	uint64_t passed[TREE_MEMBERS / 64] = {0};
	uint32_t i, gen;
	int32_t pid;
	while (best_member(self_adj, passed, &i, &pid, &gen)) {
		if (!victim_from(v, i, pid, gen, true)) {
			passed[i / 64] |= 1ull << (i % 64); /* gone meanwhile */
			continue;
		}
		if (v->self)
			v->adj = self_adj;
		v->killed_ns = now;
		v->deadline_ns = now + gfp_policy.oom_victim_timeout * 1000000;
		s->oom_slot = i + 1;
		s->oom_gen = gen;
		s->oom_killed_ns = v->killed_ns;
		s->oom_deadline_ns = v->deadline_ns;
		r = PICK_NEW;
		break;
	}
	if (locked)
		tree_unlock();
	return r;
}

static __attribute__((noreturn)) void kill_self(void)
{
	vmstat_memcg_event(GFP_MEMCG_OOM_KILL);
	kill(getpid(), SIGKILL);
	/* Still here: the init of a PID namespace does not take a SIGKILL
	 * from inside it (SIGNAL_UNKILLABLE). It ends as a killed process
	 * would, without its exit handlers. */
	sys_exit_group(128 + SIGKILL);
}

/* memory.oom.group (oom_kill_memcg_member): every other member this
 * process can prove, but the victim and those of oom_score_adj -1000. */
static void kill_group(const struct victim *v, const char *why)
{
	struct tree_seg *s = tree_seg;
	struct tree_member *me = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	char q[PATH_MAX + 64];
	gfp_log(GFP_LOG_ERROR,
	        "Tasks in the tree %s are going to be killed due to memory.oom.group set",
	        gfp_quote(q, sizeof(q), tree_path, strlen(tree_path)));
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS; i++) {
		struct tree_member *m = &s->m[i];
		int32_t pid = __atomic_load_n(&m->pid, __ATOMIC_ACQUIRE);
		if (pid <= 0 || m == me || i == v->i)
			continue;
		struct victim o;
		if (!victim_from(&o, i, pid, __atomic_load_n(&m->gen, __ATOMIC_RELAXED), true))
			continue;
		if (o.seen.pid != 1 && o.adj > -1000 && tree_member_pidfd_kill(o.seen.pidfd) == 0) {
			char name[128];
			vmstat_memcg_event(GFP_MEMCG_OOM_KILL);
			gfp_log(GFP_LOG_ERROR, "%s: Killed process %s", why,
			        who(name, sizeof(name), &o));
		}
		close(o.seen.pidfd);
	}
}

/* oom_kill_process: the report, then SIGKILL through the pidfd proven to
 * be the victim; with `group`, every other member, the requester last. */
static void kill_victim(struct gfp_slow *s, int adj, struct victim *v, bool memcg, bool group)
{
	const char *why = memcg ? "Memory cgroup out of memory" : "Out of memory";
	char outcome[256], name[128], h[3][GFP_HUMAN_LEN];
	int64_t tree = budget_live();
	int share = tree > 0 ? (int)(v->charged * 100 / tree) : 0;
	gfp_snprintf(outcome, sizeof(outcome),
	             "%s: Killed process %s live:%s charged:%s share:%d%% of the tree's %s "
	             "oom_score_adj:%d",
	             why, who(name, sizeof(name), v), gfp_human_size(h[0], v->live),
	             gfp_human_size(h[1], v->charged), share, gfp_human_size(h[2], tree), v->adj);
	oom_report(s, adj, outcome, true);
	int r = 0, e = 0;
	if (!v->self) {
		r = tree_member_pidfd_kill(v->seen.pidfd);
		e = errno;
		if (r == 0)
			vmstat_memcg_event(GFP_MEMCG_OOM_KILL);
		close(v->seen.pidfd);
		v->seen.pidfd = -1;
	}
	if (group) {
		vmstat_memcg_event(GFP_MEMCG_OOM_GROUP_KILL);
		kill_group(v, why);
		if (adj > -1000)
			kill_self();
	}
	if (v->self)
		kill_self();
	if (r != 0 && e != ESRCH) {
		/* Not ours to kill any more (it changed its uid): as a victim
		 * that does not give its memory back, at once. */
		gfp_log(GFP_LOG_WARNING, "oom: cannot kill process %s: %s", name, gfp_strerror(e));
		bool locked = tree_lock();
		if (tree_seg->oom_slot == v->i + 1 && tree_seg->oom_gen == v->gen)
			tree_seg->oom_deadline_ns = 0;
		if (locked)
			tree_unlock();
	}
}

/* The victim's memory came back: it is gone (or a zombie) and its slot
 * emptied. False at its deadline. */
static bool wait_victim(const struct victim *v)
{
	struct tree_member *m = &tree_seg->m[v->i];
	for (;;) {
		bool back = __atomic_load_n(&m->pid, __ATOMIC_ACQUIRE) != v->pid ||
		            __atomic_load_n(&m->gen, __ATOMIC_RELAXED) != v->gen;
		if (!back && tree_member_left(v->i, v->pid, true)) {
			tree_member_reclaim(m, v->pid, v->gen);
			back = true;
		}
		uint64_t now = gfp_now_ns();
		if (back) {
			char name[128], h[GFP_HUMAN_LEN];
			gfp_log(GFP_LOG_INFO,
			        "oom_reaper: reaped process %s: %s back to the tree %u ms after "
			        "the kill",
			        who(name, sizeof(name), v), gfp_human_size(h, v->charged),
			        (unsigned)((now - v->killed_ns) / 1000000));
			bool locked = tree_lock();
			if (tree_seg->oom_slot == v->i + 1 && tree_seg->oom_gen == v->gen)
				tree_seg->oom_slot = 0;
			if (locked)
				tree_unlock();
			return true;
		}
		if (now >= v->deadline_ns)
			return false;
		uint64_t left_ms = (v->deadline_ns - now) / 1000000 + 1;
		tree_wait(tree_free_gen(), left_ms < 10 ? left_ms : 10);
	}
}

enum oom_result tree_oom_kill(struct gfp_slow *s, int adj, bool memcg, bool group)
{
	struct tree_member *me = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	if (me) /* for the members that cannot read it */
		__atomic_store_n(&me->adj, adj, __ATOMIC_RELAXED);
	for (;;) {
		struct victim v;
		enum pick p = pick(&v, adj);
		if (p == PICK_NONE) {
			if (!s->oom_exempt_logged)
				oom_report(s, adj,
				           memcg
				               ? "Out of memory and no killable member in the tree "
				                 "(oom_score_adj -1000, in a PID namespace this "
				                 "process cannot see into, or killed and still "
				                 "holding its memory): the charge fails"
				               : "Out of memory and no killable member in the tree "
				                 "(oom_score_adj -1000, in a PID namespace this "
				                 "process cannot see into, or killed and still "
				                 "holding its memory): the request keeps looping",
				           false);
			s->oom_exempt_logged = true;
			return memcg ? OOM_NO_VICTIM : OOM_RETRY;
		}
		if (p == PICK_NEW)
			kill_victim(s, adj, &v, memcg, group);
		if (wait_victim(&v))
			return OOM_PROGRESS;
		/* Its time is up: pick() skips it and takes the next. */
	}
}
