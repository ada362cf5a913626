/*
 * thread.c - the per-thread state: the fast path's mode word, the
 * re-entrancy guard, and the statistics block of threads under a policy.
 *
 * Blocks come from mmap, never from malloc, and are reused after their thread
 * exits. The registry lock is taken only when a thread starts or ends under a
 * policy and when totals are read, never on an allocation.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

__thread struct gfp_tls gfp_tls __attribute__((tls_model("initial-exec")));

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gfp_thread *live;                      /* threads under a policy */
static struct gfp_thread *spare;                     /* blocks of exited threads, for reuse */
static struct gfp_entry_stats dead[GFP_ENTRY_COUNT]; /* what exited threads counted */
static pthread_key_t exit_key;
static bool exit_key_ok;
unsigned gfp_nr_threads; /* atomic: threads in `live` */

static void fold(struct gfp_entry_stats *into, const struct gfp_entry_stats *from)
{
	for (size_t i = 0; i < GFP_ENTRY_COUNT; i++) {
		into[i].calls += __atomic_load_n(&from[i].calls, __ATOMIC_RELAXED);
		into[i].bytes += __atomic_load_n(&from[i].bytes, __ATOMIC_RELAXED);
		into[i].failures += __atomic_load_n(&from[i].failures, __ATOMIC_RELAXED);
	}
}

/* Runs from the thread's own pthread key destructor. Late calls of this
 * thread (other destructors, libc teardown) stay idle: registering again
 * would only ask glibc for another destructor round. */
static void thread_exit(void *arg)
{
	struct gfp_thread *t = arg;
	gfp_tls.guard++;
	reserve_thread_exit(t); /* before registry_lock: the budget's lock nests outside it */
	profile_thread_exit(t);
	pthread_mutex_lock(&registry_lock);
	fold(dead, t->stats);
	budget_thread_exit(t);
	__atomic_sub_fetch(&gfp_nr_threads, 1, __ATOMIC_RELAXED);
	if (t->prev)
		t->prev->next = t->next;
	else
		live = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->next = spare;
	spare = t;
	pthread_mutex_unlock(&registry_lock);
	gfp_tls.thread = NULL;
	gfp_tls.exiting = 1;
	gfp_tls.mode = GFP_TLS_IDLE;
	gfp_tls.countdown = INT64_MAX;
	gfp_tls.free_direct = 1;
	gfp_tls.guard--;
}

void thread_init(void)
{
	exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

static struct gfp_thread *block_get(void)
{
	struct gfp_thread *t = NULL;
	pthread_mutex_lock(&registry_lock);
	if (spare) {
		t = spare;
		spare = t->next;
	}
	pthread_mutex_unlock(&registry_lock);
	if (!t) {
		void *m = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		t = m;
	}
	struct gfp_site_counts *sites = t->sites; /* cleared at exit, kept for reuse */
	memset(t, 0, sizeof(*t));
	t->sites = sites;
	t->tid = (int)gettid();
	return t;
}

static struct gfp_thread *register_thread(void)
{
	struct gfp_thread *t = block_get();
	if (!t)
		return NULL;
	t->countdown = &gfp_tls.countdown;
	t->free_direct = &gfp_tls.free_direct;
	budget_thread_start(t);
	pthread_mutex_lock(&registry_lock);
	t->next = live;
	if (live)
		live->prev = t;
	live = t;
	__atomic_add_fetch(&gfp_nr_threads, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&registry_lock);
	if (exit_key_ok)
		pthread_setspecific(exit_key, t);
	gfp_tls.thread = t;
	reserve_thread_start(t);
	return t;
}

/* Decides the thread's mode: at its first call, and again after gfp-ctl
 * changed the policy (thread_poke_all). */
enum gfp_tls_mode thread_enter(void)
{
	if (!gfp_init())
		return GFP_TLS_UNDECIDED;
	gfp_tls.errnop = &errno;
	gfp_tls.decided_gen = __atomic_load_n(&gfp_policy_gen, __ATOMIC_ACQUIRE);
	bool idle = !__atomic_load_n(&gfp_policy_active, __ATOMIC_ACQUIRE) || gfp_tls.exiting ||
	            gfp_armed_fast;
	/* Under ctl=1 idle threads are registered too, so that a change can
	 * reach them. */
	bool registered = gfp_tls.thread || (idle && !(gfp_policy.ctl && !gfp_tls.exiting));
	if (!registered) {
		gfp_tls.guard++;
		register_thread();
		gfp_tls.guard--;
	}
	if (idle) {
		/* fail.probability alone needs no engine until the countdown to
		 * the next injection runs out (it is drawn at the next call). */
		gfp_tls.countdown = gfp_armed_fast && !gfp_tls.exiting ? 1 : INT64_MAX;
		gfp_tls.mode = GFP_TLS_IDLE;
		gfp_tls.free_direct = 1;
		return GFP_TLS_IDLE;
	}
	gfp_tls.countdown = 0;
	gfp_tls.mode = GFP_TLS_POLICY;
	gfp_tls.free_direct =
	    gfp_free_direct_ok && !__atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST);
	return GFP_TLS_POLICY;
}

/* Waiters came or went: a free must wake them, so while anyone waits no
 * policy thread frees directly. Recomputed under the lock from the count,
 * so that the last of two racing updates is right. A free already past its
 * check when the byte flips wakes nobody; the waiter's pause is bounded. */
void thread_update_free_direct(void)
{
	pthread_mutex_lock(&registry_lock);
	unsigned char v = gfp_free_direct_ok && !__atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST);
	for (struct gfp_thread *t = live; t; t = t->next)
		__atomic_store_n(t->free_direct, v, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&registry_lock);
}

void thread_poke_all(void)
{
	pthread_mutex_lock(&registry_lock);
	for (struct gfp_thread *t = live; t; t = t->next) {
		/* The owner decrements without a lock: a store that lands
		 * between its load and its store is lost. What is left after
		 * that is near INT64_MAX (idle) or a gap; try a few times. */
		for (int i = 0; i < 100; i++) {
			__atomic_store_n(t->countdown, 0, __ATOMIC_RELAXED);
			sched_yield();
			if (__atomic_load_n(t->countdown, __ATOMIC_RELAXED) < (INT64_MAX >> 1))
				break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
}

void thread_sum_stats(struct gfp_entry_stats out[GFP_ENTRY_COUNT])
{
	memset(out, 0, sizeof(struct gfp_entry_stats) * GFP_ENTRY_COUNT);
	pthread_mutex_lock(&registry_lock);
	fold(out, dead);
	for (struct gfp_thread *t = live; t; t = t->next)
		fold(out, t->stats);
	pthread_mutex_unlock(&registry_lock);
}

void thread_each_sites(void (*fn)(struct gfp_site_counts *, const struct gfp_site_counts *,
                                  unsigned),
                       struct gfp_site_counts *into, unsigned n)
{
	pthread_mutex_lock(&registry_lock);
	for (struct gfp_thread *t = live; t; t = t->next) {
		const struct gfp_site_counts *s = __atomic_load_n(&t->sites, __ATOMIC_ACQUIRE);
		if (s)
			fn(into, s, n);
	}
	pthread_mutex_unlock(&registry_lock);
}

int64_t thread_sum_live(void)
{
	int64_t sum = 0;
	pthread_mutex_lock(&registry_lock);
	for (struct gfp_thread *t = live; t; t = t->next)
		sum += budget_thread_live(t);
	pthread_mutex_unlock(&registry_lock);
	return sum;
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
 * blocks of the parent's other threads become spares. */
void thread_atfork_child(void)
{
	pthread_mutex_init(&registry_lock, NULL);
	struct gfp_thread *self = gfp_tls.thread, *t = live;
	while (t) {
		struct gfp_thread *next = t->next;
		if (t != self) {
			budget_thread_exit(t); /* its memory is the child's too */
			t->next = spare;
			spare = t;
		}
		t = next;
	}
	memset(dead, 0, sizeof(dead));
	live = self;
	gfp_nr_threads = self ? 1 : 0;
	if (self) {
		self->next = self->prev = NULL;
		memset(self->stats, 0, sizeof(self->stats));
		self->tid = (int)gettid();
	}
}
