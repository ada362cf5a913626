/*
 * tree_member.c - who the members of a tree are (limit.scope=tree): their
 * slots, whether each is still there, and signalling one only when it is
 * proven to be that member.
 *
 * A pid says nothing across PID namespaces: two members started by
 * `unshare --pid --fork` are both pid 1, and pid 1 here is init. So a slot
 * holds the member's PID namespace and time namespace (the inodes of
 * /proc/self/ns/pid and ns/time; /proc's start times are shifted by the
 * reader's time namespace), its pid there, its start time, and a
 * generation bumped by each claim. A process judges a member by its pid
 * only when both share those namespaces and its /proc is its own PID
 * namespace's (the NSpid line of /proc/self/status has one field; a /proc
 * of an ancestor namespace lists more): kill(pid, 0) and /proc/PID/stat
 * then speak of the member. For any other member, two locks on the
 * segment's file, which F_GETLK sees from any namespace:
 *
 * - liveness: an OFD lock (F_OFD_SETLK) on the slot's byte, taken through
 *   the open file description the process maps the segment with. The
 *   mapping keeps that description, and so the lock, until the process
 *   ends or execs, however it ends, whatever descriptors it closes
 *   (closefrom): exit_mm then drops it, after the memory is back. A forked
 *   child maps the segment anew through a description of its own, or the
 *   inherited mapping would keep its parent's lock alive;
 * - identity: a POSIX lock (F_SETLK) on the byte TREE_MEMBERS further,
 *   whose F_GETLK gives the holder's pid in the caller's namespace when
 *   the caller can see it. It goes when the process closes the
 *   descriptor, and is taken again at its next look.
 *
 * A member neither way can tell about (another namespace, no lock: a file
 * system without locks) is left alone until it leaves.
 *
 * A member is signalled only through a pidfd proven to be it: the pidfd
 * opened first, then the member's start time read again through /proc
 * (same namespaces), or its slot's identity lock found held by that pid
 * again (a namespace this process sees into). A pid reused in between
 * fails the check; a member that ended in between cannot be reached
 * through its pidfd. A member in a namespace this process cannot see into
 * is never signalled.
 *
 * Must never allocate: it runs inside malloc and fork handlers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "fd.h"
#include "tree_structs.h"
#include "tree_proc.h"
#include "sys.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static struct {
	struct tree_ns pidns, timens;
	bool proc_ok; /* /proc is this process's PID namespace's */
} self;

static int token_fd = -1; /* the segment's file, for the locks */
static bool fd_maps;      /* atomic: ... the description it is mapped with */
static dev_t seg_dev;     /* ... which file that is */
static ino_t seg_ino;
static uint32_t my_gen;       /* the gen of tree_me when claimed */
static int32_t join_adj;      /* a forked child's oom_score_adj ... */
static bool join_adj_known;   /* ... when it is its parent's */
static int reopening;         /* atomic: a thread opens token_fd again */
static uint64_t next_reap_ns; /* atomic */
static uint64_t next_deep_ns; /* atomic */

/* ------------------------------------------------------------------------
 * Processes: who a member is, here
 * ---------------------------------------------------------------------- */

/* The same PID namespace as this process: its pid means the same here. */
static bool same_pidns(const struct tree_member *m)
{
	return self.pidns.ino && tree_proc_ns_eq(&m->pidns, &self.pidns);
}

/* Its pid and /proc tell of it here: same namespaces, /proc of ours. */
static bool by_pid(const struct tree_member *m)
{
	return self.proc_ok && same_pidns(m) && tree_proc_ns_eq(&m->timens, &self.timens) &&
	       __atomic_load_n(&m->start, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * The locks on the segment's file
 * ---------------------------------------------------------------------- */

#define ID_LOCK(i) (TREE_MEMBERS + (i)) /* the identity lock's byte */

static bool is_seg(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == seg_dev && st.st_ino == seg_ino;
}

void tree_member_keep_fd(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return;
	}
	seg_dev = st.st_dev;
	seg_ino = st.st_ino;
	token_fd = gfp_fd_lift(fd); /* out of the program's way */
	__atomic_store_n(&fd_maps, token_fd >= 0, __ATOMIC_RELAXED);
}

static int lock_op(int fd, int cmd, short type, uint32_t at, struct flock *fl)
{
	memset(fl, 0, sizeof(*fl)); /* l_pid 0, as the OFD commands want */
	fl->l_type = type;
	fl->l_whence = SEEK_SET;
	fl->l_start = (off_t)at;
	fl->l_len = 1;
	return fcntl(fd, cmd, fl);
}

/* 1 when another process's lock holds byte `at` (*holder: its pid here
 * for a POSIX lock, 0 when this process cannot see it), 0 when none does,
 * -1 when fd cannot tell. */
static int lock_holder(int fd, int cmd, uint32_t at, int32_t *holder)
{
	struct flock fl;
	if (fd < 0 || lock_op(fd, cmd, F_WRLCK, at, &fl) != 0)
		return -1;
	if (fl.l_type == F_UNLCK)
		return 0;
	*holder = fl.l_pid > 0 ? (int32_t)fl.l_pid : 0;
	return 1;
}

/* Whether token_fd is the segment's file still. A program may close the
 * descriptors it did not open, or put a file of its own in their place
 * (never closed here then): the segment is opened again, and the
 * identity lock taken again (the liveness lock lives on in the mapping). */
static bool token_check(void)
{
	if (is_seg(__atomic_load_n(&token_fd, __ATOMIC_RELAXED)))
		return true;
	if (!seg_ino || __atomic_exchange_n(&reopening, 1, __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&token_fd, -1, __ATOMIC_RELAXED);
	__atomic_store_n(&fd_maps, false, __ATOMIC_RELAXED);
	int fd = open(tree_path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && !is_seg(fd)) {
		close(fd); /* another file by that name now: no lock of ours on it */
		fd = -1;
	}
	struct tree_member *me = __atomic_load_n(&tree_me, __ATOMIC_ACQUIRE);
	if (fd >= 0) {
		struct flock fl;
		fd = gfp_fd_lift(fd);
		if (me)
			lock_op(fd, F_SETLK, F_WRLCK, ID_LOCK((uint32_t)(me - tree_seg->m)), &fl);
		__atomic_store_n(&token_fd, fd, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&reopening, 0, __ATOMIC_RELEASE);
	return fd >= 0;
}

/* In a forked child: the segment mapped anew through a description of its
 * own, in the place of the inherited descriptor (its parent's description:
 * the child holds no lock yet, closing it drops none). */
static void fork_file(void)
{
	int old = token_fd;
	bool had = is_seg(old);
	int fd = open(tree_path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && (!is_seg(fd) || sys_mmap(tree_seg, TREE_SEG_SIZE, PROT_READ | PROT_WRITE,
	                                        MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)) {
		close(fd);
		fd = -1;
	}
	__atomic_store_n(&fd_maps, fd >= 0, __ATOMIC_RELAXED);
	if (fd < 0) {
		/* It shares its parent's description: it joins without locks
		 * (and keeps its parent's alive while it lives). */
		if (!had)
			token_fd = -1; /* the program's now, if anyone's */
		return;
	}
	if (had && dup3(fd, old, O_CLOEXEC) == old) {
		close(fd);
		fd = old;
	} else if (!had) {
		fd = gfp_fd_lift(fd);
	}
	token_fd = fd;
	__atomic_store_n(&fd_maps, fd >= 0, __ATOMIC_RELAXED);
}

void tree_member_self_init(bool forked)
{
	int saved = errno;
	/* The kernel copies oom_score_adj to a child: its parent's copy. */
	struct tree_member *parent = __atomic_load_n(&tree_me, __ATOMIC_RELAXED);
	join_adj_known = forked && parent;
	if (join_adj_known)
		join_adj = __atomic_load_n(&parent->adj, __ATOMIC_RELAXED);
	struct tree_ns was = self.pidns;
	tree_proc_ns_of("/proc/self/ns/pid", &self.pidns);
	tree_proc_ns_of("/proc/self/ns/time", &self.timens);
	/* A child is in its parent's PID namespace and /proc, unless the
	 * parent made a new namespace for its children. */
	if (!forked || !self.pidns.ino || self.pidns.ino != was.ino || self.pidns.dev != was.dev)
		self.proc_ok = self.pidns.ino && tree_proc_is_mine();
	if (forked) {
		__atomic_store_n(&reopening, 0, __ATOMIC_RELAXED); /* its parent's thread's */
		fork_file();
	}
	__atomic_store_n(&next_reap_ns, 0, __ATOMIC_RELAXED);
	errno = saved;
}

/* ------------------------------------------------------------------------
 * Slots
 * ---------------------------------------------------------------------- */

/* Takes what slot m holds out of the tree's sums: it is empty after. */
static void empty_slot(struct tree_member *m)
{
	struct tree_seg *s = tree_seg;
	tree_add64(&s->charged, -__atomic_exchange_n(&m->charged, 0, __ATOMIC_RELAXED));
	tree_add64(&s->threads, -(int64_t)__atomic_exchange_n(&m->threads, 0, __ATOMIC_RELAXED));
	tree_add64(&s->reserved, -__atomic_exchange_n(&m->reserved, 0, __ATOMIC_RELAXED));
	int32_t w = __atomic_exchange_n(&m->waiters, 0, __ATOMIC_RELAXED);
	if (w)
		__atomic_sub_fetch(&s->waiters, (uint32_t)w, __ATOMIC_RELAXED);
	__atomic_store_n(&m->live, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&m->flags, 0, __ATOMIC_RELAXED);
}

bool tree_member_reclaim(struct tree_member *m, int32_t pid, uint32_t gen)
{
	if (!__atomic_compare_exchange_n(&m->pid, &pid, TREE_PID_BUSY, false, __ATOMIC_ACQUIRE,
	                                 __ATOMIC_RELAXED))
		return false;
	if (__atomic_load_n(&m->gen, __ATOMIC_RELAXED) != gen) {
		/* Another member with the same number (another namespace). */
		__atomic_store_n(&m->pid, pid, __ATOMIC_RELEASE);
		return false;
	}
	empty_slot(m);
	__atomic_store_n(&m->pid, 0, __ATOMIC_RELEASE);
	tree_wake(); /* memory came back */
	return true;
}

bool tree_member_gone(const struct tree_seg *s, int fd, uint32_t i, int32_t pid, bool deep)
{
	const struct tree_member *m = &s->m[i];
	int saved = errno;
	bool gone = same_pidns(m) && kill(pid, 0) != 0 && errno == ESRCH;
	if (gone)
		;
	else if (by_pid(m)) {
		char state;
		uint64_t start;
		/* No /proc entry (it just ended: kill(2) sees that next time):
		 * there. A zombie's memory is back with the kernel: its bytes
		 * are too. */
		gone = deep && tree_proc_stat(pid, &state, &start) &&
		       (state == 'Z' || state == 'X' ||
		        start != __atomic_load_n(&m->start, __ATOMIC_RELAXED));
	} else if (fd >= 0 && (__atomic_load_n(&m->flags, __ATOMIC_RELAXED) & TREE_TOKEN)) {
		/* The kernel drops the lock as the process ends or execs,
		 * with the mapping that holds it: its memory is back. */
		int32_t holder;
		gone = lock_holder(fd, F_OFD_GETLK, i, &holder) == 0;
	}
	errno = saved;
	return gone;
}

bool tree_member_left(uint32_t i, int32_t pid, bool deep)
{
	return tree_member_gone(tree_seg, token_check() ? token_fd : -1, i, pid, deep);
}

void tree_member_reap(bool force)
{
	struct tree_seg *s = tree_seg;
	uint64_t now = gfp_now_ns();
	if (!force && now < __atomic_load_n(&next_reap_ns, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&next_reap_ns, now + 1000000, __ATOMIC_RELAXED);
	bool deep = force || now >= __atomic_load_n(&next_deep_ns, __ATOMIC_RELAXED);
	if (deep)
		__atomic_store_n(&next_deep_ns, now + 100000000, __ATOMIC_RELAXED);
	int fd = token_check() ? __atomic_load_n(&token_fd, __ATOMIC_RELAXED) : -1;
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE);
	struct tree_member *me = __atomic_load_n(&tree_me, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS; i++) {
		struct tree_member *m = &s->m[i];
		int32_t pid = __atomic_load_n(&m->pid, __ATOMIC_ACQUIRE);
		if (pid <= 0 || m == me)
			continue;
		uint32_t gen = __atomic_load_n(&m->gen, __ATOMIC_RELAXED);
		if (tree_member_gone(s, fd, i, pid, deep))
			tree_member_reclaim(m, pid, gen);
	}
}

static void raise_high(uint32_t to)
{
	uint32_t h = __atomic_load_n(&tree_seg->high, __ATOMIC_RELAXED);
	while (h < to && !__atomic_compare_exchange_n(&tree_seg->high, &h, to, false,
	                                              __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* Slot m was this process's before an exec: same namespaces, pid and
 * start time (the heap it counted is gone). */
static bool was_mine(const struct tree_member *m, uint64_t start)
{
	return __atomic_load_n(&m->start, __ATOMIC_RELAXED) == start &&
	       tree_proc_ns_eq(&m->pidns, &self.pidns) && tree_proc_ns_eq(&m->timens, &self.timens);
}

/* Slot i, taken (BUSY), gets this process's locks. A free slot whose
 * liveness lock another process holds (one that had it and lives on) is
 * given back: false. The process's own slot from before an exec is kept
 * without locks then (a child of its old image holds them). Without locks
 * at all, a slot is taken without. */
static bool lock_slot(uint32_t i, bool own, bool *token)
{
	struct flock fl;
	bool maps = __atomic_load_n(&fd_maps, __ATOMIC_RELAXED);
	*token = maps && lock_op(token_fd, F_OFD_SETLK, F_WRLCK, i, &fl) == 0;
	if (!*token && maps && !own && (errno == EAGAIN || errno == EACCES)) {
		__atomic_store_n(&tree_seg->m[i].pid, 0, __ATOMIC_RELEASE);
		return false;
	}
	if (*token)
		lock_op(token_fd, F_SETLK, F_WRLCK, ID_LOCK(i), &fl);
	return true;
}

/* The process's slot: the one it had before an exec, else a free one. */
static struct tree_member *claim_slot(pid_t pid, uint64_t start, int64_t live)
{
	struct tree_seg *s = tree_seg;
	bool token = false;
	struct tree_member *got = NULL;
	uint32_t high = __atomic_load_n(&s->high, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < high && i < TREE_MEMBERS && !got; i++) {
		struct tree_member *m = &s->m[i];
		int32_t p = pid;
		if (!was_mine(m, start) ||
		    !__atomic_compare_exchange_n(&m->pid, &p, TREE_PID_BUSY, false,
		                                 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		lock_slot(i, true, &token); /* its locks went with the exec */
		got = m;
	}
	for (int pass = 0; pass < 2 && !got; pass++) {
		for (uint32_t i = 0; i < TREE_MEMBERS && !got; i++) {
			int32_t free_pid = 0;
			if (!__atomic_compare_exchange_n(&s->m[i].pid, &free_pid, TREE_PID_BUSY,
			                                 false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				continue;
			raise_high(i + 1);
			if (lock_slot(i, false, &token))
				got = &s->m[i];
		}
		if (!got)
			tree_member_reap(true); /* full: the dead give theirs back */
	}
	if (!got)
		return NULL;
	empty_slot(got); /* what a member that left mid-fold may have put there */
	my_gen = __atomic_add_fetch(&got->gen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&got->start, start, __ATOMIC_RELAXED);
	tree_proc_ns_set(&got->pidns, &self.pidns);
	tree_proc_ns_set(&got->timens, &self.timens);
	__atomic_store_n(&got->live, live, __ATOMIC_RELAXED);
	__atomic_store_n(&got->adj, join_adj_known ? join_adj : tree_proc_adj(0), __ATOMIC_RELAXED);
	if (!tree_proc_comm(0, got->comm))
		memset(got->comm, 0, sizeof(got->comm));
	__atomic_store_n(&got->flags, token ? TREE_TOKEN : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&got->pid, (int32_t)pid, __ATOMIC_RELEASE);
	return got;
}

bool tree_member_join(int64_t live)
{
	int saved = errno;
	char state;
	uint64_t start = 0;
	if (!tree_proc_stat(0, &state, &start))
		start = 0; /* no /proc: its pid and its lock tell alone */
	struct tree_member *m = claim_slot(getpid(), start, live);
	__atomic_store_n(&tree_me, m, __ATOMIC_RELEASE);
	errno = saved;
	return m != NULL;
}

bool tree_member_depart(void)
{
	struct tree_member *m = __atomic_exchange_n(&tree_me, NULL, __ATOMIC_ACQ_REL);
	if (!m)
		return false;
	/* Its locks go as the process ends, soon: until then no other
	 * process takes the slot (lock_slot), and no one is misled. */
	tree_member_reclaim(m, __atomic_load_n(&m->pid, __ATOMIC_RELAXED), my_gen);
	return true;
}

/* ------------------------------------------------------------------------
 * Seeing a member, and signalling it
 * ---------------------------------------------------------------------- */

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int tree_member_pidfd_kill(int pidfd)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
}

/* What /proc says of a process, believed once it is proven. */
struct peek {
	int adj;
	bool named;
	char comm[16];
};

static void peek(pid_t pid, struct peek *p)
{
	p->adj = tree_proc_adj(pid);
	p->named = tree_proc_comm(pid, p->comm);
}

static bool seen_as(struct tree_seen *v, int32_t pid, const struct peek *p)
{
	v->pid = pid;
	v->adj = p->adj;
	if (p->named)
		memcpy(v->comm, p->comm, 16);
	return true;
}

/* By its pid (same namespaces): what /proc says, proven by its start time
 * read last, after the pidfd is open. */
static bool see_by_pid(const struct tree_member *m, int32_t pid, bool prove, struct tree_seen *v)
{
	if (prove && (v->pidfd = pidfd_open(pid)) < 0)
		return false;
	struct peek p;
	peek(pid, &p);
	char state;
	uint64_t start;
	if (!tree_proc_stat(pid, &state, &start) || state == 'Z' || state == 'X' ||
	    start != __atomic_load_n(&m->start, __ATOMIC_RELAXED))
		return false;
	return seen_as(v, pid, &p);
}

/* By its locks: alive, and the pid here of the process holding its
 * identity lock, proven by its holding it still once the pidfd is open. */
static bool see_by_token(uint32_t i, bool prove, struct tree_seen *v)
{
	int fd = __atomic_load_n(&token_fd, __ATOMIC_RELAXED);
	int32_t holder = 0, again = 0, any;
	if (lock_holder(fd, F_OFD_GETLK, i, &any) != 1 ||
	    lock_holder(fd, F_GETLK, ID_LOCK(i), &holder) != 1 || holder <= 0)
		return false; /* gone, or in a namespace this process cannot see */
	if (prove && (v->pidfd = pidfd_open(holder)) < 0)
		return false;
	struct peek p = {.adj = v->adj};
	if (self.proc_ok) /* else the slot's copies */
		peek(holder, &p);
	if (lock_holder(fd, F_GETLK, ID_LOCK(i), &again) != 1 || again != holder)
		return false;
	return seen_as(v, holder, &p);
}

bool tree_member_see(uint32_t i, int32_t pid, uint32_t gen, bool prove, struct tree_seen *v)
{
	int saved = errno;
	const struct tree_member *m = &tree_seg->m[i];
	v->pid = 0;
	v->pidfd = -1;
	v->adj = __atomic_load_n(&m->adj, __ATOMIC_RELAXED);
	memcpy(v->comm, m->comm, 16);
	v->comm[15] = '\0';
	bool ok = false;
	if (m == __atomic_load_n(&tree_me, __ATOMIC_RELAXED)) {
		v->pid = getpid();
		v->adj = tree_proc_adj(0);
		tree_proc_comm(0, v->comm);
		ok = true;
	} else if (by_pid(m)) {
		ok = see_by_pid(m, pid, prove, v);
	} else if ((__atomic_load_n(&m->flags, __ATOMIC_RELAXED) & TREE_TOKEN) && token_check()) {
		ok = see_by_token(i, prove, v);
	}
	/* And the slot is that member's still. */
	ok = ok && __atomic_load_n(&m->pid, __ATOMIC_ACQUIRE) == pid &&
	     __atomic_load_n(&m->gen, __ATOMIC_RELAXED) == gen;
	if (!ok) {
		if (v->pidfd >= 0)
			close(v->pidfd);
		v->pidfd = -1;
		v->pid = 0;
		v->adj = __atomic_load_n(&m->adj, __ATOMIC_RELAXED);
		memcpy(v->comm, m->comm, 16);
		v->comm[15] = '\0';
	}
	errno = saved;
	return ok;
}
