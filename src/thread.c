/*
 * thread.c - the per-thread state: the fast path's mode word, the
 * re-entrancy guard, and the statistics block of threads under a policy.
 *
 * Blocks come from mmap, never from malloc, and are reused after their thread
 * exits. What a thread's start and exit mean to the modules above (the
 * budget, the reserve, the profile) is thread_life.c's: this file calls none
 * of them, and it does not read the configuration. The registry lock is taken only when a thread
 * starts or ends under a policy and when totals are read, never on an allocation.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "route_switch.h"
#include "sys.h"

__thread struct gfp_tls gfp_tls __attribute__((tls_model("initial-exec")));

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gfp_thread *live;                      /* threads under a policy */
static struct gfp_thread *spare;                     /* blocks of exited threads, for reuse */
static struct gfp_entry_stats dead[GFP_ENTRY_COUNT]; /* what exited threads counted */
unsigned gfp_nr_threads;                             /* atomic: threads in `live` */
int gfp_waiters; /* atomic: requests inside the slow path (budget.c) */

/* Threads past their exit whose frees the budget must still see
 * (exit_counted), until they are gone: under registry_lock, nlate atomic.
 * Past LATE_MAX they are not told apart any more (late_overflow). */
#define LATE_MAX 64
static int late_tid[LATE_MAX];
static unsigned nlate;
static bool late_overflow;
static uint64_t late_next_look_ns; /* atomic */

static void fold(struct gfp_entry_stats *into, const struct gfp_entry_stats *from)
{
	for (size_t i = 0; i < GFP_ENTRY_COUNT; i++) {
		into[i].calls += __atomic_load_n(&from[i].calls, __ATOMIC_RELAXED);
		into[i].bytes += __atomic_load_n(&from[i].bytes, __ATOMIC_RELAXED);
		into[i].failures += __atomic_load_n(&from[i].failures, __ATOMIC_RELAXED);
	}
}

/* Under registry_lock: where free goes when its route switches (route.c:
 * a budget's free is jemalloc's own, stats=sites' the profiled): to the shim
 * while a free must be seen, by a waiter or because its thread is past its
 * exit; the late thread's own frees come after its own store. */
static void free_route_update(void)
{
	if (route_free_switches)
		route_free_switch(__atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST) || nlate ||
		                  late_overflow);
}

/* Under registry_lock: the late threads that are gone leave the list. */
static void late_reap(void)
{
	int saved = errno;
	pid_t pid = getpid();
	unsigned n = nlate;
	for (unsigned i = 0; i < n;) {
		/* ESRCH: no such thread in the process, so it frees no more
		 * (a new thread with its number only keeps it listed longer). */
		if (syscall(SYS_tgkill, pid, late_tid[i], 0) != 0 && errno == ESRCH)
			late_tid[i] = late_tid[--n];
		else
			i++;
	}
	__atomic_store_n(&nlate, n, __ATOMIC_RELAXED);
	errno = saved;
}

struct gfp_thread *thread_block_get(void)
{
	struct gfp_thread *t = NULL;
	gfp_lock(&registry_lock);
	if (spare) {
		t = spare;
		spare = t->next;
	}
	gfp_unlock(&registry_lock);
	if (!t) {
		void *m = sys_mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		t = m;
	}
	struct gfp_caller_counts *callers = t->callers; /* cleared at exit, kept for reuse */
	memset(t, 0, sizeof(*t));
	t->callers = callers;
	t->tid = (int)gettid();
	return t;
}

void thread_registry_lock(void)
{
	gfp_lock(&registry_lock);
}

void thread_registry_unlock(void)
{
	gfp_unlock(&registry_lock);
}

struct gfp_thread *thread_first(void)
{
	return live;
}

void thread_link(struct gfp_thread *t)
{
	gfp_lock(&registry_lock);
	t->next = live;
	if (live)
		live->prev = t;
	live = t;
	if (!gfp_tls.shim_thread)
		__atomic_add_fetch(&gfp_nr_threads, 1, __ATOMIC_RELAXED);
	gfp_unlock(&registry_lock);
}

void thread_fold_dead(struct gfp_thread *t)
{
	fold(dead, t->stats);
}

void thread_late_add(int tid)
{
	if (nlate == LATE_MAX)
		late_reap();
	if (nlate < LATE_MAX) {
		late_tid[nlate] = tid;
		__atomic_store_n(&nlate, nlate + 1, __ATOMIC_RELAXED);
	} else {
		late_overflow = true;
	}
	free_route_update();
}

void thread_unlink(struct gfp_thread *t)
{
	if (!gfp_tls.shim_thread)
		__atomic_sub_fetch(&gfp_nr_threads, 1, __ATOMIC_RELAXED);
	if (t->prev)
		t->prev->next = t->next;
	else
		live = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->next = spare;
	spare = t;
}

const char *thread_name(char name[16])
{
	if (prctl(PR_GET_NAME, name) != 0)
		name[0] = '\0';
	return name;
}

/* Waiters came or went: a free must wake them, so while anyone waits no
 * policy thread frees directly. Recomputed under the lock from the count,
 * so that the last of two racing updates is right. A free already past its
 * check when the byte flips wakes nobody; the waiter's pause is bounded. */
void thread_update_free_direct(void)
{
	gfp_lock(&registry_lock);
	unsigned char v =
	    gfp_meaning.free_direct_ok && !__atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST);
	for (struct gfp_thread *t = live; t; t = t->next)
		__atomic_store_n(t->free_direct, v, __ATOMIC_RELAXED);
	free_route_update();
	gfp_unlock(&registry_lock);
}

/* Looked at, at most once a millisecond, when a thread is granted an
 * allowance: the free route returns to jemalloc once the list is empty. */
void thread_reap_late(void)
{
	if (likely(!__atomic_load_n(&nlate, __ATOMIC_RELAXED)))
		return;
	uint64_t now = gfp_now_ns();
	if (now < __atomic_load_n(&late_next_look_ns, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&late_next_look_ns, now + 1000000, __ATOMIC_RELAXED);
	gfp_lock(&registry_lock);
	late_reap();
	free_route_update();
	gfp_unlock(&registry_lock);
}

/* Whether thread t has looked at the policy of generation gen, or will at
 * its next call. */
static bool poke_seen(const struct gfp_thread *t, uint64_t gen)
{
	return __atomic_load_n(t->decided_gen, __ATOMIC_ACQUIRE) == gen ||
	       __atomic_load_n(t->countdown, __ATOMIC_RELAXED) <= 0;
}

void thread_poke_all(void)
{
	uint64_t gen = __atomic_load_n(&gfp_policy_gen, __ATOMIC_ACQUIRE);
	gfp_lock(&registry_lock);
	/* UNDECIDED sends a policy thread's next call to thread_enter; a
	 * countdown of 0 does the same for an idle one. The owner decrements
	 * without a lock, so a store that lands between its load and its store
	 * is lost: every thread is poked, then, after one yield for them all,
	 * those whose poke was lost are poked again. */
	for (int round = 0; round < 100; round++) {
		bool lost = false;
		for (struct gfp_thread *t = live; t; t = t->next) {
			if (round && poke_seen(t, gen))
				continue;
			__atomic_store_n(t->mode, GFP_TLS_UNDECIDED, __ATOMIC_RELAXED);
			__atomic_store_n(t->countdown, 0, __ATOMIC_RELAXED);
		}
		sched_yield();
		for (struct gfp_thread *t = live; t && !lost; t = t->next)
			lost = !poke_seen(t, gen);
		if (!lost)
			break;
	}
	gfp_unlock(&registry_lock);
}

void thread_sum_stats(struct gfp_entry_stats out[GFP_ENTRY_COUNT])
{
	memset(out, 0, sizeof(struct gfp_entry_stats) * GFP_ENTRY_COUNT);
	gfp_lock(&registry_lock);
	fold(out, dead);
	for (struct gfp_thread *t = live; t; t = t->next)
		fold(out, t->stats);
	gfp_unlock(&registry_lock);
}

void thread_each_callers(void (*fn)(struct gfp_caller_counts *, const struct gfp_caller_counts *,
                                    unsigned),
                         struct gfp_caller_counts *into, unsigned n)
{
	gfp_lock(&registry_lock);
	for (struct gfp_thread *t = live; t; t = t->next) {
		const struct gfp_caller_counts *s = __atomic_load_n(&t->callers, __ATOMIC_ACQUIRE);
		if (s)
			fn(into, s, n);
	}
	gfp_unlock(&registry_lock);
}

unsigned thread_count(void)
{
	return __atomic_load_n(&gfp_nr_threads, __ATOMIC_RELAXED);
}

void thread_atfork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
}

void thread_atfork_parent(void)
{
	pthread_mutex_unlock(&registry_lock);
}

/* The child is a new process with one thread: it counts from zero, and the
 * blocks of the parent's other threads become spares (once the budget has
 * counted what they held: thread_life.c). */
void thread_atfork_child(void)
{
	pthread_mutex_init(&registry_lock, NULL);
	struct gfp_thread *self = gfp_tls.thread, *t = live;
	while (t) {
		struct gfp_thread *next = t->next;
		if (t != self) {
			t->next = spare;
			spare = t;
		}
		t = next;
	}
	memset(dead, 0, sizeof(dead));
	nlate = 0; /* the parent's threads are not the child's */
	late_overflow = false;
	live = self;
	gfp_nr_threads = self ? 1 : 0;
	if (self) {
		self->next = self->prev = NULL;
		memset(gfp_tls.stats, 0, sizeof(gfp_tls.stats));
		self->tid = (int)gettid();
	}
}
