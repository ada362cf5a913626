/*
 * init_once.c - the lock that orders the first reading of the
 * configuration, and whether and by which process it was read: init.c
 * takes the lock around the reading, fork.c's handlers hold it across a
 * fork, the program's _exit (init_exit.c) asks whether this process read
 * it. Below them all, so that none calls another for it: it must never
 * call a module, only the lock.
 */
#include <pthread.h>

#include "init_once.h"
#include "thread.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
int init_state;
pid_t init_pid;

void init_once_lock(void)
{
	pthread_mutex_lock(&init_lock);
}

void init_once_unlock(void)
{
	pthread_mutex_unlock(&init_lock);
}

/* Whether the configuration was read, after waiting for a reading another
 * thread has under way; never starts one (init.c's init_ensure does). The
 * guard is up while the lock is held, as init_ensure's is: an allocating
 * signal handler then goes raw instead of waiting for its own thread. */
bool init_once_wait(void)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == INIT_DONE)
		return true;
	gfp_tls.guard++;
	init_once_lock();
	init_once_unlock();
	gfp_tls.guard--;
	return __atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == INIT_DONE;
}

/* The fork handlers (fork.c) hold the lock across a fork: no child is
 * born halfway through reading the configuration. */
void init_atfork_prepare(void)
{
	pthread_mutex_lock(&init_lock);
}

void init_atfork_parent(void)
{
	pthread_mutex_unlock(&init_lock);
}

void init_atfork_child(void)
{
	pthread_mutex_init(&init_lock, NULL);
}
