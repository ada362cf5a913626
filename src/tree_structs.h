/*
 * tree_structs.h - the shared budget of a process tree as it lies in the
 * segment every member maps (tree.c owns it; tree_oom.c reads its members).
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
#define TREE_VERSION 1
#define TREE_MEMBERS 1024

/* A member's slot. pid > 0: the member; 0: free; TREE_PID_BUSY while a
 * process claims or gives it back (no one else looks at it then). */
#define TREE_PID_BUSY (-1)
#define TREE_OOM_SKIP 1u /* killed, and its memory did not come back in time */

struct tree_member {
	int32_t pid;
	uint32_t flags;
	uint64_t start; /* /proc/PID/stat's starttime: the pid is this process */
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
	int32_t oom_pid;
	uint64_t oom_start, oom_deadline_ns, oom_killed_ns;
	struct tree_member m[TREE_MEMBERS];
};

/* tree.c's state, for tree_oom.c. */
extern struct tree_seg *tree_seg;
extern struct tree_member *tree_me;
extern char tree_path[];

/* Whether the process of slot m (pid) is gone: no such pid, or (`deep`,
 * reading /proc) a zombie or another process with its number. */
bool tree_member_gone(const struct tree_member *m, int32_t pid, bool deep);
/* Gives the bytes of a member that is gone back to the tree; false when
 * another process did it first. */
bool tree_reclaim(struct tree_member *m, int32_t pid);
/* Looks for members that are gone: at most once a millisecond (the
 * /proc part once every 100 ms) unless `force`. */
void tree_reap(bool force);
/* Its comm, from /proc (the slot's copy when the process is gone). */
void tree_comm(const struct tree_member *m, int32_t pid, char out[16]);

#pragma GCC visibility pop

#endif /* GFP_TREE_STRUCTS_H */
