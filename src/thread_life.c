/*
 * thread_life.c - what every module does when a thread comes and goes: the
 * decision of a thread's mode (thread_enter), its registration, and the
 * pthread key destructor that ends it, each calling the registry's own
 * steps (thread.c) and each module's hook (budget, reserve, profile) in one
 * order. The order and the locks are load-bearing: the comments at each
 * call say why.
 *
 * Above the modules whose hooks it calls, below the wiring: it must never
 * be called by the registry (thread.c), nor by budget.c, reserve.c or
 * profile_thread.c from their hooks. It never reads the configuration
 * itself: the callers whose call may be the process's first (the fast
 * path, pthread_create, gfp_reserve) read it first (init_ensure), as the
 * first allocation of the process may come before any constructor; the
 * others (kswapd's thread, a mapping's charge) come once a reading started
 * and wait for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "internal.h"
#include "init_once.h"
#include "thread_life.h"

static pthread_key_t exit_key;
static bool exit_key_ok;

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
	reserve_thread_exit(t); /* before the registry lock: the budget's lock nests outside it */
	profile_thread_exit(t);
	thread_registry_lock();
	thread_fold_dead(t);
	gfp_tls.exit_counted = budget_thread_exit(t);
	if (gfp_tls.exit_counted)
		thread_late_add(t->tid);
	thread_unlink(t);
	thread_registry_unlock();
	gfp_tls.thread = NULL;
	gfp_tls.exiting = 1;
	gfp_tls.budget.allowance = 0; /* every call to the engine */
	become_idle();
	gfp_tls.guard--;
}

void thread_life_init(void)
{
	exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

static struct gfp_thread *register_thread(void)
{
	struct gfp_thread *t = thread_block_get();
	if (!t)
		return NULL;
	t->countdown = &gfp_tls.countdown;
	t->free_direct = &gfp_tls.free_direct;
	t->mode = &gfp_tls.mode;
	t->decided_gen = &gfp_tls.decided_gen;
	t->stats = gfp_tls.stats;
	budget_thread_start(t);
	thread_link(t);
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

/* Whether thread_enter registers a new thread in this process, once the
 * configuration is read. */
bool thread_registers(void)
{
	return registers(policy_idle());
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
	if (!init_once_wait())
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

/* The child is a new process with one thread: the parent's other threads
 * leave what they held to the budget, as an exited thread does (their
 * memory is the child's too), before the registry makes their blocks
 * spares. */
void thread_life_atfork_child(void)
{
	struct gfp_thread *self = gfp_tls.thread;
	for (struct gfp_thread *t = thread_first(); t; t = t->next)
		if (t != self)
			budget_thread_exit(t);
	thread_atfork_child();
}
