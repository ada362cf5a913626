/*
 * A library whose constructor starts allocating threads, so that they exist
 * before the shim's own constructor has run (ld.so initialises the
 * program's libraries before the preloaded one).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ALLOCS	10000

static pthread_t threads[THREADS];
static void *(*volatile vmalloc)(size_t) = malloc;


static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < ALLOCS; i++) {
		char *p = vmalloc(32 + (size_t)(i % 200));
		memset(p, 0x5a, 32);
		free(p);
	}
	return NULL;
}

__attribute__((constructor)) static void start(void)
{
	for (int i = 0; i < THREADS; i++)
		pthread_create(&threads[i], NULL, work, NULL);
}

__attribute__((visibility("default"))) long early_join(void)
{
	for (int i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	return (long)THREADS * ALLOCS;
}
