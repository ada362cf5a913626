/*
 * init_once.c - the lock that orders the first reading of the
 * configuration: init.c takes it around the reading, fork.c's handlers
 * hold it across a fork. Below both, so that neither calls the other for
 * it: it must never call a module, only the lock.
 */
#include <pthread.h>

#include "init_once.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

void init_once_lock(void)
{
	pthread_mutex_lock(&init_lock);
}

void init_once_unlock(void)
{
	pthread_mutex_unlock(&init_lock);
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
