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
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "route.h"
#include "sys.h"

__thread struct gfp_tls gfp_tls __attribute__((tls_model("initial-exec")));

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gfp_thread *live;                      /* threads under a policy */
static struct gfp_thread *spare;                     /* blocks of exited threads, for reuse */
static struct gfp_entry_stats dead[GFP_ENTRY_COUNT]; /* what exited threads counted */
static pthread_key_t exit_key;
static bool exit_key_ok;
unsigned gfp_nr_threads; /* atomic: threads in `live` */

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

/* An idle thread's calls are jemalloc's alone, but for what must still be
 * seen: injection's countdown (armed), every free under stats=sites (the map
 * keeps no entry of a freed block), and every call of a thread past its exit
 * whose blocks the budget or stats=sites counted (gfp_exit_watched). */
static void become_idle(void)
{
	gfp_tls.mode = GFP_TLS_IDLE;
	gfp_tls.countdown = gfp_exit_watched()                           ? 0
	                    : gfp_meaning.armed_fast && !gfp_tls.exiting ? 1
	                                                                 : INT64_MAX;
	gfp_tls.free_direct = !gfp_meaning.profile && !gfp_tls.exit_counted;
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

/* Runs from the thread's own pthread key destructor. Late calls of this
 * thread (other destructors, libc teardown) stay idle: registering again
 * would only ask glibc for another destructor round. */
static void thread_exit(void *arg)
{
	struct gfp_thread *t = arg;
	/* Keys created after ours have their destructors run after ours in a
	 * round, and they free: setting our value again asks glibc for a second
	 * round, which runs after all of the first. Not the last round: the
	 * sanitizers' runtimes take that one to tear the thread down. */
	if (++t->exit_rounds < 2) {
		pthread_setspecific(exit_key, t);
		return;
	}
	gfp_tls.guard++;
	reserve_thread_exit(t); /* before registry_lock: the budget's lock nests outside it */
	profile_thread_exit(t);
	gfp_lock(&registry_lock);
	fold(dead, t->stats);
	gfp_tls.exit_counted = budget_thread_exit(t);
	if (gfp_tls.exit_counted) {
		if (nlate == LATE_MAX)
			late_reap();
		if (nlate < LATE_MAX) {
			late_tid[nlate] = t->tid;
			__atomic_store_n(&nlate, nlate + 1, __ATOMIC_RELAXED);
		} else {
			late_overflow = true;
		}
		free_route_update();
	}
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
	gfp_unlock(&registry_lock);
	gfp_tls.thread = NULL;
	gfp_tls.exiting = 1;
	gfp_tls.budget.allowance = 0; /* every call to the engine */
	become_idle();
	gfp_tls.guard--;
}

void thread_init(void)
{
	exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

static struct gfp_thread *block_get(void)
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

static struct gfp_thread *register_thread(void)
{
	struct gfp_thread *t = block_get();
	if (!t)
		return NULL;
	t->countdown = &gfp_tls.countdown;
	t->free_direct = &gfp_tls.free_direct;
	t->mode = &gfp_tls.mode;
	t->decided_gen = &gfp_tls.decided_gen;
	t->stats = gfp_tls.stats;
	budget_thread_start(t);
	gfp_lock(&registry_lock);
	t->next = live;
	if (live)
		live->prev = t;
	live = t;
	if (!gfp_tls.shim_thread)
		__atomic_add_fetch(&gfp_nr_threads, 1, __ATOMIC_RELAXED);
	gfp_unlock(&registry_lock);
	if (exit_key_ok)
		pthread_setspecific(exit_key, t);
	gfp_tls.thread = t;
	if (!gfp_tls.shim_thread)
		reserve_thread_start(t);
	return t;
}

/* Whether a thread that is not past its exit runs idle under the policy. */
static bool policy_idle(void)
{
	return !__atomic_load_n(&gfp_meaning.active, __ATOMIC_ACQUIRE) || gfp_meaning.armed_fast;
}

/* Whether a live thread is registered: under ctl=1 idle threads are too, so
 * that a change can reach them; without the exit key a block could not be
 * given back, so none is taken. */
static bool registers(bool idle)
{
	return exit_key_ok && (!idle || gfp_policy.ctl);
}

/* Whether thread_enter registers a new thread in this process. */
bool thread_registers(void)
{
	return init_ensure() && registers(policy_idle());
}

const char *thread_name(char name[16])
{
	if (prctl(PR_GET_NAME, name) != 0)
		name[0] = '\0';
	return name;
}

/* Decides the thread's mode: as it starts (preload/start.c), at its first
 * call, and again after gfp-ctl changed the policy (thread_poke_all).
 *
 * A thread is registered as it starts or at an allocation, never at a free:
 * glibc frees from a thread it is tearing down (__libc_thread_freeres runs
 * after every key destructor, jemalloc's own included), and a block taken
 * then would never be given back - its destructor round is over - while
 * jemalloc, asked for the thread's counters, crashes on its dead state. */
enum gfp_tls_mode thread_enter(bool may_register)
{
	if (!init_ensure())
		return GFP_TLS_UNDECIDED;
	gfp_tls.errnop = &errno;
	/* The guard over the whole decision: a signal handler that allocates
	 * meanwhile goes raw instead of registering the thread twice. */
	gfp_tls.guard++;
	enum gfp_tls_mode mode;
	uint64_t gen;
	do {
		gen = __atomic_load_n(&gfp_policy_gen, __ATOMIC_ACQUIRE);
		if (gen != gfp_tls.decided_gen)
			gfp_tls.inject.rng = 0; /* fail.seed may have changed: seed again */
		gfp_tls.decided_gen = gen;
		bool idle = gfp_tls.exiting || policy_idle();
		if (may_register && !gfp_tls.thread && !gfp_tls.exiting && registers(idle))
			register_thread();
		/* Injection draws start afresh: the next eligible call draws the
		 * gap to the next injection (inject_countdown, and
		 * inject_simple_candidate under the policy). */
		gfp_tls.gap = 0;
		gfp_tls.inject_left = 0;
		if (idle) {
			become_idle();
			mode = GFP_TLS_IDLE;
		} else {
			gfp_tls.countdown = 0;
			/* Left undecided by a free: the thread's next allocation
			 * registers it. */
			gfp_tls.mode = may_register || gfp_tls.thread || gfp_tls.exiting
			                   ? GFP_TLS_POLICY
			                   : GFP_TLS_UNDECIDED;
			/* Unregistered (its block could not be had), nobody could
			 * clear the byte when waiters come: it stays 0. */
			gfp_tls.free_direct = gfp_meaning.free_direct_ok && gfp_tls.thread &&
			                      !__atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST);
			mode = GFP_TLS_POLICY;
		}
		/* A set that landed during the decision: decide again. */
	} while (gen != __atomic_load_n(&gfp_policy_gen, __ATOMIC_ACQUIRE));
	gfp_tls.guard--;
	return mode;
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

int64_t thread_sum_live(const int64_t *exited)
{
	gfp_lock(&registry_lock);
	int64_t sum = __atomic_load_n(exited, __ATOMIC_RELAXED);
	for (struct gfp_thread *t = live; t; t = t->next)
		sum += budget_thread_live(t);
	gfp_unlock(&registry_lock);
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
