/*
 * thread.h - thread.c: the per-thread state. struct gfp_tls is the block the
 * routes reach in one instruction (%fs-relative): a run of fields that one
 * module owns is that module's struct, from its X_structs.h (budget,
 * inject, profile); the other fields say their owner. The order is the
 * routes' (countdown, allowance, mode and free_direct on the first cache
 * line): keep the offsets when moving a field. struct gfp_thread is the
 * part other threads reach (ctl.c's pokes, the budget's sums).
 */
#ifndef GFP_THREAD_H
#define GFP_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "budget_structs.h"
#include "inject_structs.h"
#include "profile_structs.h"
#include "types.h"

#pragma GCC visibility push(hidden)

enum gfp_tls_mode {
	GFP_TLS_UNDECIDED = 0, /* new thread, or the shim is not initialised */
	GFP_TLS_IDLE = 1,      /* no policy: straight to jemalloc */
	GFP_TLS_POLICY = 2,    /* a policy applies: go through the engine */
};

struct gfp_pool;
struct gfp_caller_counts;

/* Per-thread block, allocated with mmap and reused after the thread exits. */
struct gfp_thread {
	struct gfp_thread *next, *prev;
	int tid;
	/* budget.c: jemalloc's counters of this thread, and their difference
	 * when last folded into the shared estimate. */
	const uint64_t *allocp, *deallocp;
	int64_t folded_own;
	struct gfp_caller_counts
	    *callers;                /* profile.c: counts per caller index; kept with the block */
	int64_t *countdown;          /* &gfp_tls.countdown of the thread: ctl.c pokes it */
	int exit_rounds;             /* thread_life.c: destructor rounds seen */
	unsigned char *free_direct;  /* &gfp_tls.free_direct: flipped while someone waits */
	unsigned char *mode;         /* &gfp_tls.mode: set UNDECIDED by a poke */
	const uint64_t *decided_gen; /* &gfp_tls.decided_gen */
	/* reserve.c: bytes reserved and not drawn yet, by gfp_reserve and by
	 * reserve.thread; changed only under the budget's exact lock. */
	int64_t resv_left, thread_left;
	int64_t thread_want;   /* reserve.thread's target, refilled towards */
	bool exact_only;       /* tokens: every request draws first, under the lock */
	bool resv_held;        /* gfp_reserve succeeded since the last unreserve */
	struct gfp_pool *pool; /* pool.c: the prefaulted arena of the reservation */
	/* The thread's counts per entry point: in its gfp_tls, where the
	 * routes reach them in one instruction. */
	struct gfp_entry_stats *stats;
};

struct gfp_tls {
	/* The allocation fast path's one read-modify-write: calls left before
	 * the engine must look. IDLE threads hold INT64_MAX; threads under a
	 * policy stay at or below 0, so that every call reaches the engine;
	 * with fail.probability alone it counts down to the next injection
	 * (inject.c: inject_countdown). 0 in a new thread: undecided. */
	int64_t countdown;
	struct gfp_tls_budget budget; /* budget.c: the allowance (budget_structs.h) */
	int64_t gap;                  /* inject.c: what countdown was last set to */
	uint64_t decided_gen;         /* gfp_policy_gen when the mode was decided */
	int64_t inject_left;          /* inject.c: a policy thread's calls to its next injection */
	unsigned char mode;           /* enum gfp_tls_mode: what the engine reads */
	unsigned char guard;          /* >0 while the shim works: nested calls go raw */
	unsigned char exiting;
	unsigned char exit_counted; /* budget_thread_exit took what it held */
	unsigned char in_reclaim;   /* >0 while shrinkers run: PF_MEMALLOC */
	unsigned char unwinding;    /* unwind.c: nested entries into libunwind */
	/* The free fast path's one read: 1 when a free is jemalloc's alone
	 * (idle, or a policy that counts nothing per free while nobody waits).
	 * Other threads flip it when waiters come and go (thread.c). */
	unsigned char free_direct;
	/* A thread the shim made (kswapd.c): registered, so that its frees
	 * count, but no program thread: no reserve, not in gfp_nr_threads. */
	unsigned char shim_thread;
	unsigned scope;               /* context.c: the thread's scopes */
	struct gfp_tls_inject inject; /* inject.c: the generator, calls (inject_structs.h) */
	int *errnop;
	int saved_errno; /* fastpath.c: free's, across jemalloc's call */
	struct gfp_thread *thread;
	struct gfp_stash {
		size_t size, align;
		uintptr_t caller;
		int mallocx_flags;
		unsigned entry;
	} stash; /* fastpath.c: the common request, across jemalloc's call */
	/* What the thread's calls counted, per entry (gfp_thread.stats). */
	struct gfp_entry_stats stats[GFP_ENTRY_COUNT];
	struct gfp_caller_cache caller; /* profile.c, stats=sites (profile_structs.h) */
};
extern __thread struct gfp_tls gfp_tls __attribute__((tls_model("initial-exec")));

/* Every lock of the shim is taken with the guard up: a signal handler that
 * allocates or frees on this thread meanwhile goes to jemalloc alone,
 * instead of waiting for a lock its own thread holds. (fork's handlers,
 * which hold locks across fork, are the exception.) */
static inline void gfp_lock(pthread_mutex_t *m)
{
	gfp_tls.guard++;
	pthread_mutex_lock(m);
}

static inline void gfp_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	gfp_tls.guard--;
}

/* atomic: requests waiting in the slow path (budget.c counts them); while
 * there are any, frees must wake them, so every thread reads it. */
extern int gfp_waiters;

/* The calling thread's name (PR_GET_NAME; "" if it cannot be read). */
const char *thread_name(char name[16]);

/* The registry's own steps of a thread's start and exit; thread_life.c
 * orders them with each module's. A cleared block for the calling thread
 * (a spare, else mapped), NULL if none can be had: */
struct gfp_thread *thread_block_get(void);
/* Takes the registry lock itself: t joins the live threads. */
void thread_link(struct gfp_thread *t);
/* The registry lock, with the guard up (gfp_lock). A module may walk the
 * live threads under it, from thread_first along ->next, taking no lock
 * that nests outside it (the budget's sums). */
void thread_registry_lock(void);
void thread_registry_unlock(void);
struct gfp_thread *thread_first(void);
/* Under the registry lock, at t's exit: its counts join the exited
 * threads'; a thread past its exit whose frees the budget must still see
 * joins the late list (and the free route follows); t leaves the live
 * threads, its block kept for reuse. */
void thread_fold_dead(struct gfp_thread *t);
void thread_late_add(int tid);
void thread_unlink(struct gfp_thread *t);
void thread_atfork_prepare(void);
void thread_atfork_parent(void);
void thread_atfork_child(void);
/* Sums every thread's statistics (live and exited) into `out`. */
void thread_sum_stats(struct gfp_entry_stats out[GFP_ENTRY_COUNT]);
unsigned thread_count(void);

/* A counter that only its own thread writes and others read with relaxed
 * loads (at exit, gfp-ctl report). On x86-64 one add on memory: a reader
 * sees the old value or the new, and a signal handler counting on the same
 * thread cannot come between a load and a store and be lost. Elsewhere, and
 * under ThreadSanitizer (which must see the access), a relaxed load and
 * store. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GFP_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define GFP_TSAN 1
#endif
static inline void gfp_add(int64_t *c, int64_t n)
{
#if defined(__x86_64__) && !defined(GFP_TSAN)
	asm("addq %1, %0" : "+m"(*c) : "er"(n));
#else
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
#endif
}

static inline void gfp_sub(int64_t *c, int64_t n)
{
#if defined(__x86_64__) && !defined(GFP_TSAN)
	asm("subq %1, %0" : "+m"(*c) : "er"(n));
#else
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) - n, __ATOMIC_RELAXED);
#endif
}

static inline void gfp_count(uint64_t *c, uint64_t n)
{
	gfp_add((int64_t *)c, (int64_t)n);
}

/* Makes every registered thread look at the policy again at its next call. */
void thread_poke_all(void);
/* Sets every registered policy thread's free_direct from gfp_waiters, and
 * switches the free route (route.h: route_free_switch) too. */
void thread_update_free_direct(void);
/* Drops the threads past their exit that are gone from the late list. */
void thread_reap_late(void);
/* Calls fn(into, t->callers, n) for every live thread with counts. */
void thread_each_callers(void (*fn)(struct gfp_caller_counts *, const struct gfp_caller_counts *,
                                    unsigned),
                         struct gfp_caller_counts *into, unsigned n);

#pragma GCC visibility pop

#endif /* GFP_THREAD_H */
