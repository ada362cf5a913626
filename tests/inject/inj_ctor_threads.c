/*
 * inj_ctor_threads - start-up requests from threads: the program's
 * constructor allocates four blocks and starts two detached threads before
 * main, one that allocates and frees in a loop and exits with
 * pthread_exit, one that only frees the constructor's blocks; it waits for
 * both. Prints "ctor=N main=R": N of the constructor's and the first
 * thread's 104 requests that failed, R main's request (. or X).
 */
#include <pthread.h>
#include <sched.h>

#include "inj_common.h"

static void *blocks[4];
static int done, failed; /* atomic */

static void *allocator(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		void *p = malloc(48 + (size_t)i);
		if (!p)
			__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
		inj_keep(p);
		free(p);
	}
	__atomic_add_fetch(&done, 1, __ATOMIC_RELEASE);
	pthread_exit(NULL);
}

static void *freer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++)
		free(blocks[i]);
	__atomic_add_fetch(&done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void start_detached(void *(*fn)(void *))
{
	pthread_attr_t a;
	pthread_t t;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, fn, NULL) != 0)
		inj_die("inj_ctor_threads: pthread_create failed");
	pthread_attr_destroy(&a);
}

__attribute__((constructor)) static void before_main(void)
{
	for (int i = 0; i < 4; i++)
		if (!(blocks[i] = malloc(100)))
			__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
	start_detached(allocator);
	start_detached(freer);
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < 2)
		sched_yield();
}

int main(void)
{
	void *p = malloc(200);
	inj_keep(p);
	inj_out(1, "ctor=%d main=%c\n", __atomic_load_n(&failed, __ATOMIC_RELAXED), p ? '.' : 'X');
	free(p);
	return 0;
}
