/*
 * unwind_gate.c - the gate around every use of libunwind: its state set up
 * at the first backtrace, and no fork while another thread is inside it.
 * site.c (site_ips) and unwind.c (backtraces) pass through it.
 *
 * Must never take a lock of the shim's or the loader's, nor allocate: it
 * runs inside malloc, in signal handlers and in fork handlers.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <sched.h>
#include <stdbool.h>

#include "thread.h"
#include "unwind_gate.h"
#include "unwind_mem.h"

/* libunwind's own state is set up at the first backtrace, not at start-up
 * (where it cost every process under a policy 36 000 instructions, most
 * of which never unwind): SETUP_BUSY while one thread sets it up, which
 * the others wait for (it takes none of the shim's locks, nor the
 * loader's); a signal handler that interrupts the setup on its own thread
 * gets no frames instead (waiting there would wait for itself), and so does
 * a child forked from inside it (SETUP_NEVER: libunwind's lock may be held
 * there for ever). */
enum { SETUP_NONE, SETUP_BUSY, SETUP_DONE, SETUP_NEVER };
static int setup_state; /* atomic */
static __thread bool setting_up __attribute__((tls_model("initial-exec")));

static __attribute__((noinline)) bool setup_slow(void)
{
	for (;;) {
		int s = SETUP_NONE;
		if (__atomic_compare_exchange_n(&setup_state, &s, SETUP_BUSY, false,
		                                __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
			break;
		if (s == SETUP_DONE)
			return true;
		if (s == SETUP_NEVER || setting_up)
			return false;
		sched_yield();
	}
	setting_up = true;
	/* libunwind initialises here, and opens the pipe it checks addresses
	 * with: under the guard, and outside an unwind, preload/oscalls.c
	 * refuses it; unwind_mem.c reads without it. */
	gfp_tls.guard++;
	/* libunwind's global cache of register states sits behind a mutex: a
	 * fork while another thread unwinds hands the child that mutex held,
	 * and the child's first backtrace (an OOM report, a record) waits for
	 * ever. Per-thread caching is asked for, but Debian's libunwind 1.6
	 * still takes that lock, so the fork gate below (no fork while a
	 * thread unwinds, the count reset in the child) is what keeps a child
	 * from inheriting it held. */
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	unwind_mem_init();
	gfp_tls.guard--;
	__atomic_store_n(&setup_state, SETUP_DONE, __ATOMIC_RELEASE);
	setting_up = false;
	return true;
}

bool unwind_setup(void)
{
	if (likely(__atomic_load_n(&setup_state, __ATOMIC_ACQUIRE) == SETUP_DONE))
		return true;
	return setup_slow();
}

/* Before the fork gate: another thread's setup ends first. */
void unwind_setup_atfork_prepare(void)
{
	while (!setting_up && __atomic_load_n(&setup_state, __ATOMIC_ACQUIRE) == SETUP_BUSY)
		sched_yield();
}

void unwind_setup_atfork_child(void)
{
	if (__atomic_load_n(&setup_state, __ATOMIC_RELAXED) == SETUP_BUSY)
		__atomic_store_n(&setup_state, SETUP_NEVER, __ATOMIC_RELAXED);
}

/*
 * libunwind has no fork handlers, and a child forked while another thread
 * held one of its locks waits for ever at its first unwind, with every
 * signal blocked (libunwind blocks them around its mutexes). The lock is
 * that of the address space's cache of register states
 * (local_addr_space.global_cache.lock), taken at every unw_step that
 * parses a frame, unw_backtrace's included: libunwind 1.6 turns
 * UNW_CACHE_PER_THREAD into UNW_CACHE_GLOBAL unless it was built with
 * HAVE___THREAD, which its configure never defines (Debian 12's is such a
 * build). The loader's lock that dl_iterate_phdr takes (libunwind's
 * and names_forget_unloaded's) is another: glibc's fork resets its other
 * loader locks in the child, not that one. So a fork waits until no other
 * thread is inside libunwind or dl_iterate_phdr, and no thread enters
 * while a fork waits.
 *
 * Forks from several threads overlap: glibc runs each fork's prepare
 * handlers without its atfork lock, so one thread's parent handler can run
 * while another has prepared and not forked yet. fork_waiting counts the
 * forks between prepare and their parent handler: the gate opens when the
 * last of them is done, not the first.
 */
static unsigned unwinders;    /* atomic: threads inside the gate, nested entries each */
static unsigned fork_waiting; /* atomic: forks prepared and not done in the parent */

void unwind_enter(void)
{
	/* A signal handler inside an unwind of its own thread enters at once:
	 * waiting for the fork there would wait for itself. */
	if (gfp_tls.unwinding++) {
		__atomic_add_fetch(&unwinders, 1, __ATOMIC_SEQ_CST);
		return;
	}
	for (;;) {
		__atomic_add_fetch(&unwinders, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&fork_waiting, __ATOMIC_SEQ_CST))
			return;
		__atomic_sub_fetch(&unwinders, 1, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&fork_waiting, __ATOMIC_ACQUIRE))
			sched_yield();
	}
}

void unwind_leave(void)
{
	gfp_tls.unwinding--;
	__atomic_sub_fetch(&unwinders, 1, __ATOMIC_RELEASE);
}

/* The forking thread's own entries (a fork from a handler that interrupted
 * one) are not waited for. */
void unwind_atfork_prepare(void)
{
	__atomic_add_fetch(&fork_waiting, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&unwinders, __ATOMIC_SEQ_CST) > gfp_tls.unwinding)
		sched_yield();
}

void unwind_atfork_parent(void)
{
	__atomic_sub_fetch(&fork_waiting, 1, __ATOMIC_RELEASE);
}

/* The child has one thread, this one: the other forks in flight are the
 * parent's. */
void unwind_atfork_child(void)
{
	__atomic_store_n(&unwinders, gfp_tls.unwinding, __ATOMIC_RELAXED);
	__atomic_store_n(&fork_waiting, 0, __ATOMIC_RELEASE);
}
