/*
 * internal.h - declarations shared between the engine's files, grouped by the
 * file that defines them. Nothing here is exported from libgfpshim.so.
 */
#ifndef GFP_INTERNAL_H
#define GFP_INTERNAL_H

#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <sys/types.h>

#include "gfpshim.h"

/* Every declaration below names something of libgfpshim.so itself: hidden,
 * the compiler reaches it PC-relative rather than through the GOT (the
 * idle malloc jumps through gfp_je_malloc in one instruction, not two). */
#pragma GCC visibility push(hidden)

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------------------
 * entries (preload/entries.def)
 * ---------------------------------------------------------------------- */
enum gfp_entry {
#define ENTRY(id, name, kind) GFP_E_##id,
#include "entries.def"
#undef ENTRY
	GFP_ENTRY_COUNT
};

/* Why an attempt failed. */
enum gfp_why { GFP_WHY_NONE, GFP_WHY_BUDGET, GFP_WHY_REAL, GFP_WHY_INJECT };

/* One allocation request inside the engine. */
struct gfp_req {
	enum gfp_entry entry;
	int mallocx_flags;    /* MALLOCX_ZERO, MALLOCX_ALIGN(): what jemalloc is asked */
	size_t size;          /* bytes asked for; never 0 (mallocx forbids it) */
	size_t align;         /* 0 for the natural alignment */
	void *old;            /* realloc: the block being moved */
	gfp_t gfp;            /* explicit flags on entry, the effective context after */
	enum gfp_why why;     /* set by a failed attempt */
	bool ctx_resolved;    /* gfp holds the effective context */
	uintptr_t caller;     /* return address of the entry point, 0 if unknown */
	uint64_t site;        /* site id once computed, else 0 */
	uint64_t call;        /* eligible-call number (injection) */
	bool explicit_flags;  /* gfp_malloc & co.: the slow path applies even when idle */
	size_t old_usable;    /* realloc under stats=sites: the old block's usable size */
	unsigned old_site;    /* realloc under stats=sites: the old block's site index */
	bool reserve;         /* gfp_reserve: an attempt takes a reservation, not a block */
	bool may_draw_thread; /* would otherwise loop: reserve.thread may serve it */
};

/* The state of one request in the slow path. */
struct gfp_slow {
	struct gfp_req *req;
	uint64_t start_ns;
	uint64_t next_canary_ms;
	unsigned rounds, no_progress;
	bool oom_exempt_logged;
};

/* One frame of a backtrace, symbolized. */
struct gfp_frame {
	uintptr_t ip;
	uintptr_t func_off, module_off;
	char func[96];
	char module[64];
};

extern const char *const gfp_entry_name[GFP_ENTRY_COUNT];

/* libc.c, flags.c, config.c, rules_parse.c: the policy library. */
#include "policy.h"

/* ------------------------------------------------------------------------
 * glob.c - the shell patterns of fail.sym/lib/thread and GFP_RULES.
 * ---------------------------------------------------------------------- */
/* fnmatch(pattern, string, 0) in the C locale, byte by byte; never
 * allocates, any context may call it. */
bool glob_match(const char *pattern, const char *string);

/* ------------------------------------------------------------------------
 * log.c - every message the shim prints, one write(2) each.
 * ---------------------------------------------------------------------- */
enum gfp_level { GFP_LOG_ERROR, GFP_LOG_WARNING, GFP_LOG_INFO };
/* 0, or -1 with a message in `err` for a bad GFP_LOG value. */
int log_set_dest(const char *dest, bool secure, char *err, size_t errlen);
void gfp_log(enum gfp_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gfp_log_raw(const char *p, size_t n);

/* ------------------------------------------------------------------------
 * dest.c - every destination the shim writes to (GFP_LOG, GFP_RECORD,
 * GFP_REPORT): named once at start-up, opened once, never through a symlink.
 * ---------------------------------------------------------------------- */
enum gfp_dest_kind {
	GFP_DEST_APPEND, /* messages and records: one write(2) each, appended */
	GFP_DEST_REPORT, /* a whole file at exit: a new file renamed into place */
};
struct gfp_dest {
	const char *var; /* GFP_LOG, ...: names it in messages */
	int fd;          /* atomic; -1: nowhere (or a report's path) */
	bool own;        /* fd was opened from path: dev and ino tell it apart */
	bool log;        /* GFP_LOG: its own failure goes to stderr */
	bool dead;       /* atomic: a write failed, was reported; no more */
	dev_t dev;
	ino_t ino;
	char path[1024]; /* a report's path (%p: the pid), or what fd opened */
};
/* Parses stderr, fd:N (also /dev/stdout, /dev/stderr, /dev/fd/N) or a path
 * into d and checks it can be written; 0, or -1 with one line in err. A
 * path is ignored when secure. */
int gfp_dest_set(struct gfp_dest *d, const char *var, enum gfp_dest_kind kind, const char *value,
                 bool secure, char *err, size_t errlen);
/* One write(2) of the text: false when it failed (the first failure is
 * reported, later writes are not tried). Keeps errno; never raises SIGPIPE. */
bool gfp_dest_write(struct gfp_dest *d, const char *p, size_t n);
/* A report: the whole text, into a file that replaces the path (or down
 * the descriptor); failures are reported. */
void gfp_dest_publish(struct gfp_dest *d, const char *p, size_t n);
bool gfp_dest_on(const struct gfp_dest *d);
/* "a directory", "a FIFO", ...: what a path is, for messages. */
const char *gfp_file_type(mode_t mode);

/* [start, end) of addresses. */
struct gfp_range {
	uintptr_t start, end;
};

/* ------------------------------------------------------------------------
 * backend.c - jemalloc's fastest entry for each kind of request.
 * ---------------------------------------------------------------------- */
extern void *(*gfp_je_malloc)(size_t);
extern void (*gfp_je_free)(void *);
extern void *(*gfp_je_realloc)(void *, size_t);
extern void *(*gfp_je_calloc)(size_t, size_t);
extern int (*gfp_je_posix_memalign)(void **, size_t, size_t);
/* For memalign too: jemalloc 5.3's own memalign sets no errno. */
extern void *(*gfp_je_aligned_alloc)(size_t, size_t); /* power-of-two align >= 8 */
/* Where jemalloc's code lies: 0, 0 until backend_init. */
extern struct gfp_range gfp_je_text;
/* The gfp_je_* are jemalloc's own malloc, free...: they answer as glibc
 * does but for the cases preload/malloc.c's routes check. Else the x-API
 * wrappers above serve (a jemalloc built with a prefix). */
extern bool gfp_je_own;
void backend_init(void);

/* ------------------------------------------------------------------------
 * init.c - lazy initialisation, the global state, fork handlers.
 * ---------------------------------------------------------------------- */
extern struct gfp_policy gfp_policy;
/* Whether any policy needs the shim on the allocation path at all. */
extern bool gfp_policy_active;
/* Nothing per call but the budget and statistics: no injection. */
extern bool gfp_policy_plain;
/* A key shapes what a failing request does (else failures pass as jemalloc's). */
extern bool gfp_slowpath_on;
extern bool gfp_secure;
/* True once the configuration is read; before that every call is passed
 * through untouched (ld.so, libstdc++'s emergency pool). */
bool gfp_init(void);
/* GFP_STRICT: a bad setting exits 125 (true, the default) or warns. */
bool gfp_config_strict(void);
void gfp_fini(void);

/* ------------------------------------------------------------------------
 * thread.c - the per-thread state.
 * ---------------------------------------------------------------------- */
enum gfp_tls_mode {
	GFP_TLS_UNDECIDED = 0, /* new thread, or the shim is not initialised */
	GFP_TLS_IDLE = 1,      /* no policy: straight to jemalloc */
	GFP_TLS_POLICY = 2,    /* a policy applies: go through the engine */
};

struct gfp_entry_stats {
	uint64_t calls, bytes, failures;
};

/* Per-thread block, allocated with mmap and reused after the thread exits. */
struct gfp_thread {
	struct gfp_thread *next, *prev;
	int tid;
	/* budget.c: jemalloc's counters of this thread, and their difference
	 * when last folded into the shared estimate. */
	const uint64_t *allocp, *deallocp;
	int64_t folded_own;
	struct gfp_site_counts *sites; /* profile.c: counts per call site; kept with the block */
	int64_t *countdown;            /* &gfp_tls.countdown of the thread: ctl.c pokes it */
	int exit_rounds;               /* thread.c: destructor rounds seen */
	unsigned char *free_direct;    /* &gfp_tls.free_direct: flipped while someone waits */
	unsigned char *mode;           /* &gfp_tls.mode: set UNDECIDED by a poke */
	const uint64_t *decided_gen;   /* &gfp_tls.decided_gen */
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
	/* budget.c: what the thread may still charge before the budget looks
	 * again (gfp_allowance_take), granted at generation allowance_gen. */
	int64_t allowance;
	uint64_t allowance_gen;
	int64_t gap;          /* inject.c: what countdown was last set to */
	uint64_t decided_gen; /* gfp_policy_gen when the mode was decided */
	int64_t inject_left;  /* inject.c: a policy thread's calls to its next injection */
	unsigned char mode;   /* enum gfp_tls_mode: what the engine reads */
	unsigned char guard;  /* >0 while the shim works: nested calls go raw */
	unsigned char exiting;
	unsigned char exit_counted; /* budget_thread_exit took what it held */
	unsigned char in_reclaim;   /* >0 while shrinkers run: PF_MEMALLOC */
	/* The free fast path's one read: 1 when a free is jemalloc's alone
	 * (idle, or a policy that counts nothing per free while nobody waits).
	 * Other threads flip it when waiters come and go (thread.c). */
	unsigned char free_direct;
	unsigned scope;    /* context.c: the thread's scopes */
	uint64_t ordinal;  /* inject.c: from the thread's creation order */
	uint64_t children; /* inject.c: threads this one created */
	uint64_t rng;      /* inject.c: the thread's generator, 0 = unseeded */
	uint64_t calls;    /* inject.c: eligible calls of this thread */
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
	/* profile.c, stats=sites: the thread's count array (NULL until it
	 * counts, and past its exit) and the site it counted last, which the
	 * profiled routes count into without looking the site up (caller 0:
	 * none). */
	struct gfp_site_cache {
		struct gfp_site_counts *counts, *last; /* last = &counts[idx] */
		uintptr_t caller;
		uint32_t idx;
		/* The routes' leaf of the shadow map: that of the chunk
		 * that starts at `base` (GFP_ROUTE_NONE: none), while the
		 * thread counts. */
		uintptr_t base;
		/* That leaf's address less base / 4: the map word of p in
		 * the chunk is at words + (p >> 4) * 4. */
		uintptr_t words;
		/* The shadow map's leaves of the chunks the thread used last,
		 * by chunk number + 1 (0: empty): a live set of mixed sizes
		 * spans several chunks (32 cover 64 MiB of heap; 8 missed on
		 * allocbench's mixed). */
		struct gfp_leaf_ref {
			uintptr_t chunk;
			uint16_t *leaf;
		} leaves[32];
		/* The sites it used lately, by caller (gfp_recent_slot;
		 * caller 0: empty), where a route finds a call's site when it
		 * is not the last one's. */
		struct gfp_recent_site {
			uintptr_t caller;
			uint32_t idx;
		} recent[64];
	} site;
};
/* gfp_tls.site.base without a leaf: no address a program can free is
 * within a chunk of it, and NULL is not either. */
#define GFP_ROUTE_NONE ((uintptr_t)1 << 63)
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

/* Decides the calling thread's mode; returns it. */
enum gfp_tls_mode thread_enter(bool may_register);
bool thread_registers(void);
/* The calling thread's name (PR_GET_NAME; "" if it cannot be read). */
const char *thread_name(char name[16]);
void thread_init(void);
void thread_atfork_prepare(void);
void thread_atfork_parent(void);
void thread_atfork_child(void);
/* Sums every thread's statistics (live and exited) into `out`. */
void thread_sum_stats(struct gfp_entry_stats out[GFP_ENTRY_COUNT]);
/* Live bytes of every registered thread plus *exited, read under one lock. */
int64_t thread_sum_live(const int64_t *exited);
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

/* ------------------------------------------------------------------------
 * context.c - current_gfp_context(): explicit flags, default, scopes.
 * ---------------------------------------------------------------------- */
gfp_t context_of(gfp_t explicit_flags);
/* A request's context: its flags, else a rule's, else default=; worked out
 * the first time something asks, and kept in req->gfp. */
gfp_t context_resolve(struct gfp_req *req);
unsigned context_scope_push(gfp_t flags);
void context_scope_pop(unsigned cookie);

/* ------------------------------------------------------------------------
 * A policy that changes while the program runs: ctl.c's control socket
 * (ctl=1), init.c's derivation and checks of a policy, thread.c's pokes.
 * ---------------------------------------------------------------------- */
extern uint64_t gfp_policy_gen; /* atomic: bumped by every gfp-ctl set */
void ctl_start(void);
void ctl_stop(void);
void policy_derive(void);
/* Keys that are fine alone but not together: the message, or NULL; *drop
 * is the key that GFP_STRICT=0 ignores to settle it. */
const char *config_contradiction(const struct gfp_policy *p, size_t *drop);
/* Makes every registered thread look at the policy again at its next call. */
void thread_poke_all(void);
/* Whether a policy thread's frees may be jemalloc's alone while nobody waits. */
extern bool gfp_free_direct_ok;
/* Sets every registered policy thread's free_direct from gfp_waiters, and
 * switches the free route (route.h: route_free_switch) too. */
void thread_update_free_direct(void);
/* Drops the threads past their exit that are gone from the late list. */
void thread_reap_late(void);

/* ------------------------------------------------------------------------
 * profile.c - stats=sites: per-call-site statistics, live bytes.
 * ---------------------------------------------------------------------- */
struct gfp_site_counts {
	int64_t live_bytes, live_calls;
	uint64_t calls, bytes, failures, injections, retries, max_stall_ns;
};
extern bool gfp_profile_on;

/* A thread past its exit whose every call must still reach raw_alloc and
 * free_other: the budget counted what it held (exit_counted), or stats=sites
 * must clear the map for its reallocs and frees. */
static inline bool gfp_exit_watched(void)
{
	return gfp_tls.exit_counted || (gfp_tls.exiting && gfp_profile_on);
}
void profile_init(void);
void profile_before_realloc(struct gfp_req *req);
void profile_after_realloc(const struct gfp_req *req, void *p);
void profile_count(struct gfp_req *req, void *p);
bool profile_count_quick(void *p, const struct gfp_stash *s);
void profile_slow(struct gfp_req *req, unsigned rounds, uint64_t ns);
void profile_free(const void *p);
void profile_thread_exit(struct gfp_thread *t);
void profile_report(struct gfp_buf *b);
void profile_atfork_child(void);
void site_atfork_child(void);
void pool_atfork_child(void);
/* Calls fn(into, t->sites, n) for every live thread with counts. */
void thread_each_sites(void (*fn)(struct gfp_site_counts *, const struct gfp_site_counts *,
                                  unsigned),
                       struct gfp_site_counts *into, unsigned n);

/* ------------------------------------------------------------------------
 * rules.c - GFP_RULES.
 * ---------------------------------------------------------------------- */
extern bool gfp_rules_on;
int rules_init(const char *text, char *err, size_t errlen);
const char *rules_text(void);
gfp_t rules_flags(const struct gfp_req *req);

/* ------------------------------------------------------------------------
 * budget.c - limit=, watermarks, waiting for memory.
 * ---------------------------------------------------------------------- */
extern bool gfp_budget_on; /* limit= is set */
extern int gfp_waiters;    /* atomic: requests in the slow path; frees wake them */
void budget_init(void);
int64_t budget_limit(void);
int64_t budget_capacity(void);
int64_t budget_watermark(gfp_t f);
int64_t budget_live(void);
int64_t budget_thread_live(const struct gfp_thread *t);
void budget_thread_start(struct gfp_thread *t);
/* true when it counted what the thread holds into the exited threads' total. */
bool budget_thread_exit(struct gfp_thread *t);
void budget_exited_delta(int64_t delta);
/* Calls alloc(req) if the budget allows the request under flags f. */
void *budget_attempt(struct gfp_req *req, gfp_t f, void *(*alloc)(struct gfp_req *));
void budget_fold(struct gfp_thread *t, int64_t own);
/* preload/malloc.c's budget routes: set(true) points them at their own
 * functions, set(false) at the shim's (see budget_revoke). */
void budget_route_hook(void);
int budget_reserve(struct gfp_req *req, gfp_t f, int64_t *left);
int64_t budget_reserve_upto(int64_t *left, int64_t want);
void budget_unreserve(int64_t *left);
int64_t budget_reserved(void);

/* What the fast path reads of the budget (budget.c explains the scheme). */
struct gfp_budget_fast {
	int64_t low_wm;     /* the lowest watermark: limit - min_free */
	int64_t batch;      /* how far a thread may drift before it folds */
	int64_t folded;     /* atomic: the shared estimate of live bytes */
	uint64_t grant_gen; /* atomic: bumped to take back every allowance */
};
extern struct gfp_budget_fast gfp_budget;
extern unsigned gfp_nr_threads; /* atomic: threads under the policy */

static inline int64_t budget_own_live(const struct gfp_thread *t)
{
	return (int64_t)(__atomic_load_n(t->allocp, __ATOMIC_RELAXED) -
	                 __atomic_load_n(t->deallocp, __ATOMIC_RELAXED));
}

/*
 * The fast path's budget check is an allowance: charge the thread may take
 * before it must look again. budget_fast_ok grants up to one batch when the
 * shared estimate, the request and every thread's possible drift (two
 * batches each) stay under the lowest watermark; frees do not give it back
 * (the next grant sees them in jemalloc's counters).
 *
 * A request is charged 2n + 8 for n bytes (with its alignment added to n):
 * no jemalloc size class is larger (8 bytes at least, at most 25 % more above
 * 16 bytes, 32 for 17), so a spent allowance bounds the usable bytes the
 * thread took, and the drift stays within a batch between two looks.
 */
#define GFP_CHARGE(n) (2 * (n) + 8)
/* Requests from here up cannot be served; their charge saturates. */
#define GFP_CHARGE_MAX ((size_t)1 << 61)

static inline size_t budget_charge(size_t size, size_t align)
{
	return size < GFP_CHARGE_MAX && align < GFP_CHARGE_MAX ? GFP_CHARGE(size + align)
	                                                       : (size_t)INT64_MAX;
}

/* Takes `charge` from the thread's allowance; false, leaving it below zero
 * (which no grant does), when the allowance does not cover it. One
 * instruction on the thread's own word, which no other thread writes: it
 * does not see a revocation (budget_allowance_take does; the budget routes
 * that call this directly are pointed away first, budget.c). A charge of
 * 2^63 or more reads as negative and passes: only preload/malloc.c's routes
 * make one, by wrapping GFP_CHARGE for a request jemalloc cannot serve,
 * whose NULL then sends it to the engine, where the next grant sets the
 * allowance right again. */
static inline __attribute__((always_inline)) bool gfp_allowance_take(size_t charge)
{
#if defined(__x86_64__)
	asm goto("subq %0, %1\n\tjl %l[out]"
	         :
	         : "r"(charge), "m"(gfp_tls.allowance)
	         : "cc", "memory"
	         : out);
	return true;
out:
	return false;
#else
	return __atomic_sub_fetch(&gfp_tls.allowance, (int64_t)charge, __ATOMIC_RELAXED) >= 0;
#endif
}

/* True when `extra` bytes beyond the shared estimate certainly stay under
 * the low watermark, whatever the other threads (each within a batch or two
 * of the estimate) do meanwhile. */
static inline bool budget_clearly_fits(int64_t extra)
{
	int64_t slack =
	    2 * gfp_budget.batch * (int64_t)__atomic_load_n(&gfp_nr_threads, __ATOMIC_RELAXED);
	return __atomic_load_n(&gfp_budget.folded, __ATOMIC_RELAXED) + extra + slack <=
	       __atomic_load_n(&gfp_budget.low_wm, __ATOMIC_RELAXED);
}

/* The engine's take: only from an allowance no revocation has taken back. */
static inline bool budget_allowance_take(size_t charge)
{
	if (unlikely(gfp_tls.allowance_gen !=
	             __atomic_load_n(&gfp_budget.grant_gen, __ATOMIC_ACQUIRE)))
		return false;
	return gfp_allowance_take(charge);
}

/* Sets the calling thread's allowance, valid while the generation is `gen`. */
void budget_grant(int64_t amount, uint64_t gen);

/* True when a request of `charge` certainly fits under every watermark,
 * whatever the other threads do meanwhile; grants the thread the rest of a
 * batch to take without looking. */
static inline bool budget_fast_ok(struct gfp_thread *t, size_t charge)
{
	if (unlikely(!t || !t->allocp || charge > (uint64_t)gfp_budget.batch || t->exact_only))
		return false;
	/* The generation before the look: a revocation during it wins. */
	uint64_t gen = __atomic_load_n(&gfp_budget.grant_gen, __ATOMIC_ACQUIRE);
	int64_t own = budget_own_live(t), drift = own - t->folded_own;
	if (unlikely(drift > gfp_budget.batch || drift < -gfp_budget.batch)) {
		budget_fold(t, own);
		drift = 0;
	}
	if (!budget_clearly_fits(drift + (int64_t)charge))
		return false;
	/* The drift stays within a batch until the next look. */
	budget_grant(gfp_budget.batch - (drift > 0 ? drift : 0) - (int64_t)charge, gen);
	return true;
}

/* After a free while someone waits: fold at once, so that the waiter sees
 * the memory. */
static inline void budget_after_free(struct gfp_thread *t)
{
	if (unlikely(!t || !t->allocp))
		return;
	budget_fold(t, budget_own_live(t));
}
void budget_waiter_enter(void);
void budget_waiter_exit(void);
uint64_t budget_free_gen(void);
void budget_wake_waiters(void);
void budget_wait(uint64_t seen, uint64_t ms);
void budget_atfork_child(void);

/* ------------------------------------------------------------------------
 * reserve.c - gfp_reserve, reserve.thread; pool.c - reserve.prefault.
 * ---------------------------------------------------------------------- */
struct gfp_pool;
int reserve_take(size_t bytes, gfp_t flags);
void reserve_release(void);
void *reserve_attempt(struct gfp_req *req, gfp_t f);
int64_t reserve_plan_draw(const struct gfp_thread *t, const struct gfp_req *req, int64_t grow,
                          int64_t room);
int64_t reserve_commit_draw(struct gfp_thread *t, int64_t draw);
void reserve_drawn(struct gfp_req *req, int64_t draw);
void reserve_thread_start(struct gfp_thread *t);
void reserve_thread_exit(struct gfp_thread *t);
void reserve_refill(struct gfp_thread *t);
bool reserve_would_loop(const struct gfp_req *req);
bool reserve_pool_may_serve(const struct gfp_thread *t, const struct gfp_req *req);
void reserve_pool_served(void);
void reserve_report(struct gfp_buf *b);
int pool_add(struct gfp_pool **pp, size_t bytes);
void *pool_alloc(struct gfp_pool *p, struct gfp_req *req);
void pool_release(struct gfp_pool **pp);

/* ------------------------------------------------------------------------
 * reclaim.c - jemalloc purge, shrinkers, OOM notifiers.
 * ---------------------------------------------------------------------- */
int reclaim_shrinker_register(gfp_shrink_fn scan, void *arg, unsigned kind);
int reclaim_oom_notifier_register(gfp_oom_fn fn, void *arg);
size_t reclaim_run(gfp_t ctx, size_t want, bool with_jemalloc);
size_t reclaim_oom_notify(void);
void reclaim_atfork_child(void);

/* ------------------------------------------------------------------------
 * oom.c - the OOM step; what its answer means is decided in decide.h.
 * ---------------------------------------------------------------------- */
#include "decide.h"
enum oom_result oom_step(struct gfp_slow *s);

/* ------------------------------------------------------------------------
 * canary.c - canary, failure report, misuse warnings.
 * ---------------------------------------------------------------------- */
uint64_t gfp_now_ns(void);
unsigned gfp_order(size_t size);
void canary_tick(struct gfp_slow *s);
void canary_warn(const struct gfp_slow *s);
void canary_warn_alloc(const struct gfp_slow *s, const char *reason);
bool canary_oom_report_ok(unsigned *missed);
void canary_misuse(const struct gfp_slow *s);

/* ------------------------------------------------------------------------
 * unwind.c - backtraces.
 * ---------------------------------------------------------------------- */
void unwind_init(void);
int unwind_capture(struct gfp_frame *frames, int max);
/* From a signal handler: the frames of the interrupted code. */
int unwind_capture_signal(struct gfp_frame *frames, int max);
void unwind_format(struct gfp_buf *b, const struct gfp_frame *frames, int n);
/* `buf` holds module+offset when the caller has no name. */
const char *unwind_caller(const struct gfp_frame *frames, int n, char *buf, size_t size);
/* Whether a frame's function name (or, with `module`, its module) matches
 * the glob; frames without a name match nothing. */
bool unwind_any_frame(const struct gfp_frame *frames, int n, const char *glob, bool module);

/* ------------------------------------------------------------------------
 * slowpath.c - attempts and the slow path.
 * ---------------------------------------------------------------------- */
void *gfp_attempt(struct gfp_req *req, gfp_t f);
void *gfp_slowpath(struct gfp_req *req) __attribute__((noinline, cold));

/* ------------------------------------------------------------------------
 * inject.c - fault injection (the fail.* keys).
 * ---------------------------------------------------------------------- */
/* site.c's, declared here for the start-up gate's inline below. */
bool site_in_ldso(uintptr_t ip);
extern bool gfp_inject_on;     /* some fail.* key can inject */
extern bool gfp_inject_simple; /* only fail.probability (see inject_init) */
extern bool gfp_armed_fast;    /* and nothing else shapes allocation: threads stay IDLE */
extern double gfp_inject_probability;
extern bool gfp_main_started; /* atomic: main() was entered (preload/start.c) */
void inject_init(void);
/* GFP_INJECT_PID names another process: this one neither injects nor
 * reports (its GFP_REPORT would overwrite the one under test's). */
bool inject_other_process(void);
void inject_report_sites(struct gfp_buf *b);
bool inject_should_fail(struct gfp_req *req, bool at_attempt);
uint64_t inject_child_ordinal(void);
void inject_atfork_child(void);
void gfp_inject_fired(const struct gfp_req *req);
uint64_t inject_seed_rng(void);
bool inject_simple_fire(struct gfp_req *req);
bool inject_countdown(struct gfp_req *req);

/* The thread's generator (xorshift64*): seeded from fail.seed and the
 * thread's creation order, so a seed reproduces with threads. */
static inline double inject_draw(void)
{
	uint64_t x = gfp_tls.rng;
	if (unlikely(!x))
		x = inject_seed_rng();
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	gfp_tls.rng = x;
	return (double)((x * 0x2545f4914f6cdd1dULL) >> 11) * (1.0 / 9007199254740992.0);
}

int64_t inject_next_gap(void);

/* The simple mode's check for a thread under the policy: eligible (main
 * started, not ld.so) and the call the thread's gap chose. The same gaps
 * from the same generator as an idle thread's countdown (inject_countdown),
 * so a seed fails the same calls whatever else the policy holds. NOFAIL
 * and the stack filter come after (inject_simple_fire). */
static inline bool inject_simple_candidate(uintptr_t caller)
{
	if (unlikely(!__atomic_load_n(&gfp_main_started, __ATOMIC_RELAXED)) || site_in_ldso(caller))
		return false;
	gfp_tls.calls++;
	if (gfp_tls.inject_left == 0)
		gfp_tls.inject_left = inject_next_gap();
	return --gfp_tls.inject_left == 0;
}

/* ------------------------------------------------------------------------
 * site.c - call-site ids.
 * ---------------------------------------------------------------------- */
void site_init(void);
/* An object's executable segments, as one range; 0, 0 if it has none. */
struct dl_phdr_info;
struct gfp_range site_text_of(const struct dl_phdr_info *info);
bool site_in_shim(uintptr_t ip);
bool site_in_libc(uintptr_t ip);
uintptr_t site_first_outside_libc(const uintptr_t *ips, int n);
uintptr_t site_outside_libc(uintptr_t caller);
uint64_t site_key(const uintptr_t *ips, int n);
/* The file name (no directory) of the module that holds ip - "" for the main
 * program - and ip's offset in it; NULL when no module holds it. */
const char *site_module(uintptr_t ip, uintptr_t *off);
/* The loaded object that holds ip, and its mapping's start; NULL if none. */
struct link_map *site_object(uintptr_t ip, uintptr_t *base);
/* A map from keys of raw addresses to non-zero values, for values that are
 * costly to compute once per call site (site ids, rule masks). */
#define GFP_IPCACHE_SIZE  32768
#define GFP_IPCACHE_PROBE 16
struct gfp_ipcache {
	struct gfp_ipcache_entry {
		uint64_t key;   /* atomic; 0 = empty */
		uint64_t value; /* atomic */
	} e[GFP_IPCACHE_SIZE];
};
uint64_t ipcache_get(struct gfp_ipcache *c, uint64_t key); /* 0: absent */
/* false when the key's neighbourhood is full (the value is then not kept) */
bool ipcache_put(struct gfp_ipcache *c, uint64_t key, uint64_t value);
/* The cached value, or compute(arg) (under the guard, never 0) kept for next time. */
uint64_t ipcache_lookup(struct gfp_ipcache *c, uint64_t key, uint64_t (*compute)(const void *arg),
                        const void *arg);
int site_ips(uintptr_t *ips, int max);
/* A path id: the hash of a call path (site.depth frames), what fail.site
 * names and records call "site"; never a profile index (profile.h). */
uint64_t path_id(const uintptr_t *ips, int n);
uint64_t path_of_caller(void);

/* ------------------------------------------------------------------------
 * records.c - GFP_RECORD, one JSON line per event.
 * ---------------------------------------------------------------------- */
int records_set_dest(const char *dest, bool secure, char *err, size_t errlen);
bool records_on(void);
void record_event(const char *event, const struct gfp_req *req, const struct gfp_frame *frames,
                  int n, const char *extra);

/* ------------------------------------------------------------------------
 * crash.c - the fatal-signal record.
 * ---------------------------------------------------------------------- */
void crash_init(void);

/* ------------------------------------------------------------------------
 * stats.c - totals per entry point, the GFP_REPORT file.
 * ---------------------------------------------------------------------- */
/* The values of stats= are enum gfp_stats_level (policy.h). */
/* The report's largest size. stats=paths: 16384 paths of up to 85 bytes,
 * and as many allocinfo rows of up to 300. */
#define GFP_REPORT_MAX (8u << 20)
void stats_report_at_exit(void);
void stats_format(struct gfp_buf *b, struct gfp_entry_stats s[GFP_ENTRY_COUNT]);
int stats_set_report(const char *value, bool secure, char *err, size_t errlen);

/* ------------------------------------------------------------------------
 * compat.c - glibc malloc settings that jemalloc ignores.
 * ---------------------------------------------------------------------- */
void compat_warn_glibc_env(void);

#pragma GCC visibility pop

#endif /* GFP_INTERNAL_H */
