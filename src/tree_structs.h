/*
 * tree_structs.h - the shared budget of a process tree as it lies in the
 * segment every member maps (tree_state.c holds it, tree_seg.c makes and
 * checks it, tree.c keeps its sums, tree_member.c its slots; tree_oom.c
 * reads its members), and what these files share.
 *
 * Everything in it is read and written with atomics by processes that may
 * die at any instruction (SIGKILL): no field may need two writes to be
 * right, except under the robust lock, whose next owner is told.
 */
#ifndef GFP_TREE_STRUCTS_H
#define GFP_TREE_STRUCTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

#define TREE_MAGIC   0x6566707472656531ULL /* "1eertpfe": set last, once ready */
#define TREE_VERSION 3
#define TREE_EVENTS  8 /* memory.events of the tree (vmstat.c names them) */
#define TREE_MEMBERS 1024

/* A member's slot. pid > 0: the member; 0: free; TREE_PID_BUSY while a
 * process claims or gives it back (no one else looks at it then). */
#define TREE_PID_BUSY (-1)
#define TREE_OOM_SKIP 1u /* killed, and its memory did not come back in time */
#define TREE_TOKEN    2u /* the member holds the liveness lock of its slot */

/* A namespace: the device and inode of its /proc/PID/ns/ link (0: unknown). */
struct tree_ns {
	uint64_t dev, ino;
};

struct tree_member {
	/* Who it is: its pid in its own PID namespace, which says nothing in
	 * another; that namespace, and its time namespace, which /proc's
	 * starttime is shifted by; its start time (/proc/self/stat's). */
	int32_t pid;
	uint32_t flags;
	uint32_t gen; /* bumped by each claim: which member of the slot */
	int32_t adj;  /* oom_score_adj as it last read it, for who cannot read it */
	uint64_t start;
	struct tree_ns pidns, timens;
	/* What it counts against the limit: its live bytes less what it
	 * inherited at fork, at least 0 (a memory cgroup charges a page to the
	 * process that first touched it; the parent keeps what it had). */
	int64_t charged;
	int64_t live;     /* its live bytes, inherited ones too: oom_badness's rss */
	int64_t reserved; /* reserved by its threads and not drawn */
	int32_t threads;  /* threads under the policy: each may drift two batches */
	int32_t waiters;  /* its requests in the slow path */
	char comm[16];
} __attribute__((aligned(64)));

struct tree_seg {
	uint64_t magic;
	uint32_t version, size;
	uint32_t uid;
	uint32_t high;        /* atomic: slots [0, high) have been used */
	pthread_mutex_t lock; /* robust, process-shared: exact decisions, OOM */
	int64_t limit;        /* atomic: the tree's limit= (gfp-ctl set from any member) */
	uint32_t limit_gen;   /* atomic: bumped with each change of limit */
	uint32_t free_gen;    /* atomic futex word: bumped when memory comes back */
	uint32_t waiters;     /* atomic: requests of the tree in the slow path */
	int64_t charged;      /* atomic: the members' charged, as of their last fold */
	int64_t threads;      /* atomic: the members' threads */
	int64_t reserved;     /* atomic: the members' reserved */
	/* The OOM kill being waited for (under lock): no second kill while a
	 * victim may still give its memory back (the kernel's oom_lock and
	 * MMF_OOM_SKIP). */
	uint32_t oom_slot, oom_gen; /* the victim's slot + 1 (0: none) and gen */
	uint64_t oom_deadline_ns, oom_killed_ns;
	uint64_t events[TREE_EVENTS]; /* atomic: every member's memory.events */
	struct tree_member m[TREE_MEMBERS];
};

/* The segment's file: the header and slots, in whole pages. */
#define TREE_SEG_SIZE ((sizeof(struct tree_seg) + 4095) & ~(size_t)4095)

static inline void tree_add64(int64_t *p, int64_t d)
{
	if (d)
		__atomic_add_fetch(p, d, __ATOMIC_RELAXED);
}

/* tree_state.c's: the segment, this process's slot in it, the segment's
 * file name. */
extern struct tree_seg *tree_seg;
extern struct tree_member *tree_me;
extern char tree_path[];

/* tree_seg.c: maps the segment GFP_TREE names, or a new one of its own
 * (`*fresh`: its name is for the environment). 0, or -1 with why a
 * GFP_TREE cannot be used in `err`. */
int tree_seg_open(char *err, size_t n, bool *fresh);

/* ------------------------------------------------------------------------
 * tree_member.c: who the members are, whether they are alive, and
 * signalling one
 * ---------------------------------------------------------------------- */

/* This process's namespaces and whether /proc is its PID namespace's; at
 * start-up and in a forked child (which maps the segment anew), before
 * anything else here. */
void tree_member_self_init(bool forked);
/* The segment's file, open and mapped (tree.c's `fd` is this module's from
 * now on: kept for the slot's locks, above the descriptors a program
 * uses). */
void tree_member_keep_fd(int fd);
/* Claims a slot for this process holding `live` bytes (tree_me); false
 * when every slot is taken. */
bool tree_member_join(int64_t live);
/* The process gives its slot back (tree_me becomes NULL); false when it
 * had none. */
bool tree_member_depart(void);
/* Whether slot i of segment s (its file open at fd, or -1), taken by pid,
 * is gone: proven by its pid where this process can see it (no such pid,
 * or with `deep`, reading /proc, a zombie or another process with its
 * number), else by its lock (nobody holds it); a member this process can
 * judge neither way is there. */
bool tree_member_gone(const struct tree_seg *s, int fd, uint32_t i, int32_t pid, bool deep);
/* The same for the tree's slot i (this process's fd). */
bool tree_member_left(uint32_t i, int32_t pid, bool deep);
/* Gives the bytes of slot m's member (pid, gen) back to the tree; false
 * when it is not that member's any more. */
bool tree_member_reclaim(struct tree_member *m, int32_t pid, uint32_t gen);
/* Looks for members that are gone: at most once a millisecond (the
 * /proc part once every 100 ms) unless `force`. */
void tree_member_reap(bool force);

/* A member as this process sees it. */
struct tree_seen {
	int32_t pid;   /* here (0: in a namespace this process cannot see) */
	int adj;       /* its oom_score_adj (the slot's copy if pid is 0) */
	int pidfd;     /* with tree_member_see's `prove`: a pidfd to it, else -1 */
	char comm[16]; /* its comm (the slot's copy if pid is 0) */
};
/* Slot i's member (pid and gen as loaded): false when this process cannot
 * name it (its pid here). With `prove`, false unless `seen->pidfd` is a
 * pidfd to that very process, or the member is this process (pidfd -1). */
bool tree_member_see(uint32_t i, int32_t pid, uint32_t gen, bool prove, struct tree_seen *seen);
/* SIGKILL through a pidfd tree_member_see proved; -1 with errno. */
int tree_member_pidfd_kill(int pidfd);

#pragma GCC visibility pop

#endif /* GFP_TREE_STRUCTS_H */
