/*
 * tree_oom.c - the OOM step across a process tree (limit.scope=tree,
 * oom=kill): the kernel's select_bad_process over the tree's members,
 * oom_kill_process, and the wait for the victim's memory.
 *
 * The victim is the member with the highest oom_badness: its live bytes
 * (what it inherited at fork included, as the kernel counts a child's rss)
 * plus oom_score_adj * limit / 1000; -1000 is never chosen. The requester
 * kills it (SIGKILL; itself when it is the victim) and waits, at most
 * oom.victim_timeout, for its memory to come back: for the process to be
 * gone or a zombie, whose memory the kernel has taken back, and its slot
 * emptied. Meanwhile no other member's request kills a second victim: they
 * wait for the same one (the kernel's oom_lock, and its scan that aborts
 * while a victim is still exiting). A victim that outlives the timeout (one
 * stopped where SIGKILL cannot reach it, like a task in D state that the
 * oom_reaper cannot reap) is skipped from then on, as MMF_OOM_SKIP does,
 * and the next victim is chosen (the LWN "too small to fail" proposal,
 * rather than a deadlock).
 *
 * Never holds the tree's lock across a kill or a wait.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tree.h"
#include "tree_structs.h"

struct victim {
	struct tree_member *slot;
	int32_t pid;
	uint64_t start, deadline_ns, killed_ns;
	int64_t live, charged;
	int adj;
	char comm[16];
};

enum pick { PICK_NONE, PICK_NEW, PICK_WAIT };

static void victim_from(struct victim *v, struct tree_member *m, int32_t pid, int adj)
{
	v->slot = m;
	v->pid = pid;
	v->start = __atomic_load_n(&m->start, __ATOMIC_RELAXED);
	v->live = __atomic_load_n(&m->live, __ATOMIC_RELAXED);
	v->charged = __atomic_load_n(&m->charged, __ATOMIC_RELAXED);
	v->adj = adj;
	tree_comm(m, pid, v->comm);
}

static struct tree_member *find(int32_t pid, uint64_t start)
{
	struct tree_seg *s = tree_seg;
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS; i++)
		if (__atomic_load_n(&s->m[i].pid, __ATOMIC_ACQUIRE) == pid &&
		    __atomic_load_n(&s->m[i].start, __ATOMIC_RELAXED) == start)
			return &s->m[i];
	return NULL;
}

static const char *quoted(char *out, size_t n, const char *s)
{
	return gfp_quote(out, n, s, strlen(s));
}

/* Under the lock: the victim killed by some member whose time is up. */
static void skip_victim(struct tree_member *m, uint64_t now)
{
	struct tree_seg *s = tree_seg;
	char comm[16], q[64], h[GFP_HUMAN_LEN];
	__atomic_or_fetch(&m->flags, TREE_OOM_SKIP, __ATOMIC_RELAXED);
	tree_comm(m, s->oom_pid, comm);
	gfp_log(GFP_LOG_WARNING,
	        "oom: process %d (%s) still holds %s %u ms after it was killed "
	        "(oom.victim_timeout=%ums): choosing the next victim",
	        (int)s->oom_pid, quoted(q, sizeof(q), comm),
	        gfp_human_size(h, __atomic_load_n(&m->charged, __ATOMIC_RELAXED)),
	        (unsigned)((now - s->oom_killed_ns) / 1000000),
	        (unsigned)gfp_policy.oom_victim_timeout);
}

bool tree_badness(int64_t live, int adj, int64_t limit, int64_t *points)
{
	if (adj <= -1000)
		return false; /* OOM_SCORE_ADJ_MIN: never */
	/* oom_badness: rss + oom_score_adj * totalpages / 1000, the tree's
	 * limit being all the memory there is. */
	*points = live + adj * (limit / 1000);
	return true;
}

/* select_bad_process: the victim being waited for, or a new one (the
 * member of highest badness), or none left that may be chosen. */
static enum pick pick(struct victim *v, int self_adj)
{
	struct tree_seg *s = tree_seg;
	struct tree_member *me = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	enum pick r = PICK_NONE;
	bool locked = tree_lock();
	tree_reap(true);
	uint64_t now = gfp_now_ns();
	if (s->oom_pid > 0) {
		struct tree_member *m = find(s->oom_pid, s->oom_start);
		if (m && now < s->oom_deadline_ns) {
			victim_from(v, m, s->oom_pid, 0);
			v->deadline_ns = s->oom_deadline_ns;
			v->killed_ns = s->oom_killed_ns;
			if (locked)
				tree_unlock();
			return PICK_WAIT;
		}
		if (m)
			skip_victim(m, now);
		s->oom_pid = 0;
	}
	int64_t limit = tree_limit(), best_points = 0, points;
	struct tree_member *best = NULL;
	int best_adj = 0;
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS; i++) {
		struct tree_member *m = &s->m[i];
		int32_t pid = __atomic_load_n(&m->pid, __ATOMIC_ACQUIRE);
		if (pid <= 0 || (__atomic_load_n(&m->flags, __ATOMIC_RELAXED) & TREE_OOM_SKIP))
			continue;
		int adj = m == me ? self_adj : oom_read_adj(pid);
		if (!tree_badness(__atomic_load_n(&m->live, __ATOMIC_RELAXED), adj, limit, &points))
			continue;
		if (!best || points > best_points) {
			best = m;
			best_points = points;
			best_adj = adj;
		}
	}
	if (best) {
		int32_t pid = __atomic_load_n(&best->pid, __ATOMIC_RELAXED);
		victim_from(v, best, pid, best_adj);
		v->killed_ns = now;
		v->deadline_ns = now + gfp_policy.oom_victim_timeout * 1000000;
		s->oom_pid = pid;
		s->oom_start = v->start;
		s->oom_killed_ns = v->killed_ns;
		s->oom_deadline_ns = v->deadline_ns;
		r = PICK_NEW;
	}
	if (locked)
		tree_unlock();
	return r;
}

/* oom_kill_process: the report, then SIGKILL. */
static void kill_victim(struct gfp_slow *s, int adj, const struct victim *v)
{
	char outcome[256], q[64], h[3][GFP_HUMAN_LEN];
	int64_t tree = budget_live();
	int share = tree > 0 ? (int)(v->charged * 100 / tree) : 0;
	gfp_snprintf(outcome, sizeof(outcome),
	             "Out of memory: Killed process %d (%s) live:%s charged:%s share:%d%% of the "
	             "tree's %s oom_score_adj:%d",
	             (int)v->pid, quoted(q, sizeof(q), v->comm), gfp_human_size(h[0], v->live),
	             gfp_human_size(h[1], v->charged), share, gfp_human_size(h[2], tree), v->adj);
	oom_report(s, adj, outcome, true);
	if (v->pid == getpid()) {
		kill(getpid(), SIGKILL);
		for (;;)
			pause();
	}
	if (kill(v->pid, SIGKILL) != 0 && errno != ESRCH) {
		/* Not ours to kill any more (it changed its uid): as a victim
		 * that does not give its memory back, at once. */
		gfp_log(GFP_LOG_WARNING, "oom: cannot kill process %d (%s): %s", (int)v->pid,
		        quoted(q, sizeof(q), v->comm), gfp_strerror(errno));
		bool locked = tree_lock();
		if (tree_seg->oom_pid == v->pid)
			tree_seg->oom_deadline_ns = 0;
		if (locked)
			tree_unlock();
	}
}

/* The victim's memory came back: it is gone (or a zombie) and its slot
 * emptied. False at its deadline. */
static bool wait_victim(const struct victim *v)
{
	struct tree_member *m = v->slot;
	for (;;) {
		bool back = __atomic_load_n(&m->pid, __ATOMIC_ACQUIRE) != v->pid ||
		            __atomic_load_n(&m->start, __ATOMIC_RELAXED) != v->start;
		if (!back && tree_member_gone(m, v->pid, true)) {
			tree_reclaim(m, v->pid);
			back = true;
		}
		uint64_t now = gfp_now_ns();
		if (back) {
			char q[64], h[GFP_HUMAN_LEN];
			gfp_log(
			    GFP_LOG_INFO,
			    "oom_reaper: reaped process %d (%s): %s back to the tree %u ms after "
			    "the kill",
			    (int)v->pid, quoted(q, sizeof(q), v->comm),
			    gfp_human_size(h, v->charged),
			    (unsigned)((now - v->killed_ns) / 1000000));
			bool locked = tree_lock();
			if (tree_seg->oom_pid == v->pid && tree_seg->oom_start == v->start)
				tree_seg->oom_pid = 0;
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

enum oom_result tree_oom_kill(struct gfp_slow *s, int adj)
{
	for (;;) {
		struct victim v;
		enum pick p = pick(&v, adj);
		if (p == PICK_NONE) {
			if (!s->oom_exempt_logged)
				oom_report(
				    s, adj,
				    "Out of memory and no killable member in the tree "
				    "(oom_score_adj "
				    "-1000, or killed and still holding its memory): the request "
				    "keeps looping",
				    false);
			s->oom_exempt_logged = true;
			return OOM_RETRY;
		}
		if (p == PICK_NEW)
			kill_victim(s, adj, &v);
		if (wait_victim(&v))
			return OOM_PROGRESS;
		/* Its time is up: pick() skips it and takes the next. */
	}
}

void tree_dump_tasks(struct gfp_buf *b, const char *prefix)
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
		char comm[16], h[2][GFP_HUMAN_LEN];
		tree_comm(m, pid, comm);
		gfp_buf_printf(b, "\n%s[%7d] %7d %10s %10s %13d %s", prefix, (int)pid,
		               (int)__atomic_load_n(&m->threads, __ATOMIC_RELAXED),
		               gfp_human_size(h[0], __atomic_load_n(&m->live, __ATOMIC_RELAXED)),
		               gfp_human_size(h[1], __atomic_load_n(&m->charged, __ATOMIC_RELAXED)),
		               oom_read_adj(pid), gfp_quote(q, sizeof(q), comm, strlen(comm)));
		shown++;
	}
	if (more)
		gfp_buf_printf(b, "\n%s... and %u more members", prefix, more);
}
