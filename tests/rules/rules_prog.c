/*
 * rules_prog - call sites for the GFP_RULES tests.
 *
 *   rules_prog fill|nofill REQ...
 *
 * fill: fills the budget (GFP_POLICY limit=) with 4096-, 256- and 8-byte
 * blocks until a request of each size fails and prints "filled=N"; then
 * (also with nofill) makes each request REQ in turn and prints one line
 * "REQ=ok|null" per request. The blocks REQ gets are kept. REQ is
 * WHO:SIZE (SIZE in bytes, or with K):
 *
 *   a    caller_a -> xmalloc -> malloc
 *   b    caller_b -> xmalloc -> malloc
 *   ga   caller_a_explicit -> gfp_malloc(SIZE, GFP_KERNEL) (explicit flags)
 *   na   caller_a inside gfp_scope_push(GFP_NOFS)
 *   sd   caller_strdup -> strdup of a SIZE-1 character string (SIZE <= 64K)
 *   thr  the thread "worker" (named from its own start routine before it
 *        allocates anything) -> xmalloc -> malloc
 *   late the thread "late", which makes one request (freed at once) before
 *        it names itself -> xmalloc -> malloc
 *
 * caller_a and caller_b reach malloc through the same wrapper (xmalloc), so
 * only a rule that looks past the wrapper's frame can tell them apart. The
 * threads are started and named before the budget is full (pthread_create
 * allocates) and wait until main hands them a request.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gfpshim.h>

#define NOINLINE __attribute__((noinline))

static void *volatile sink;

NOINLINE void *xmalloc(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory"); /* no tail call: keep this frame */
	return p;
}

NOINLINE void *caller_a(size_t n)
{
	void *p = xmalloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

NOINLINE void *caller_b(size_t n)
{
	void *p = xmalloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

NOINLINE void *caller_a_explicit(size_t n)
{
	void *p = gfp_malloc(n, GFP_KERNEL);
	__asm__ volatile("" ::: "memory");
	return p;
}

static char text[64 * 1024];

NOINLINE char *caller_strdup(size_t n)
{
	memset(text, 'x', n - 1);
	text[n - 1] = '\0';
	char *p = strdup(text);
	__asm__ volatile("" ::: "memory");
	return p;
}

/* A thread that makes the requests main hands it. */
struct worker {
	const char *name;
	void *(*start)(void *);
	pthread_t t;
	sem_t go, done;
	size_t size; /* 0: exit */
	void *result;
};
NOINLINE void *worker_main(void *arg);
NOINLINE void *late_main(void *arg);
static struct worker workers[2] = {{.name = "worker", .start = worker_main},
                                   {.name = "late", .start = late_main}};
static sem_t ready;

NOINLINE void worker_loop(struct worker *w)
{
	pthread_setname_np(pthread_self(), w->name);
	sem_post(&ready);
	for (;;) {
		while (sem_wait(&w->go) != 0)
			;
		if (!w->size)
			return;
		w->result = xmalloc(w->size);
		sem_post(&w->done);
	}
}

/* Two start routines, so that records tell the threads apart. */
NOINLINE void *worker_main(void *arg)
{
	worker_loop(arg);
	__asm__ volatile("" ::: "memory");
	return NULL;
}

/* Far from any watermark: the request needs no context, so no rule looks
 * at the thread's name yet. */
NOINLINE void *late_main(void *arg)
{
	free(xmalloc(1000));
	worker_loop(arg);
	__asm__ volatile("" ::: "memory");
	return NULL;
}

static void *in_worker(struct worker *w, size_t size)
{
	w->size = size;
	sem_post(&w->go);
	while (sem_wait(&w->done) != 0)
		;
	return w->result;
}

/* Keeps the filling blocks on a list, so they stay live (and reachable). */
static void **fill_list;

static long fill(size_t size)
{
	long n = 0;
	void **p;
	while ((p = malloc(size)) != NULL) {
		*p = fill_list;
		fill_list = p;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "fill") != 0 && strcmp(argv[1], "nofill") != 0)) {
		fprintf(stderr, "usage: rules_prog fill|nofill a|b|ga|na|sd|thr|late:SIZE...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0); /* no buffer to allocate once full */
	sem_init(&ready, 0, 0);
	for (int i = 0; i < 2; i++) {
		struct worker *w = &workers[i];
		sem_init(&w->go, 0, 0);
		sem_init(&w->done, 0, 0);
		if (pthread_create(&w->t, NULL, w->start, w) != 0) {
			fprintf(stderr, "rules_prog: pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < 2; i++)
		while (sem_wait(&ready) != 0)
			;
	if (strcmp(argv[1], "fill") == 0) {
		long n = fill(4096);
		n += fill(256);
		n += fill(8);
		printf("filled=%ld\n", n);
	}
	for (int i = 2; i < argc; i++) {
		char who[8];
		char unit = 0;
		unsigned long size;
		if (sscanf(argv[i], "%7[a-z]:%lu%c", who, &size, &unit) < 2 ||
		    (unit && unit != 'K')) {
			fprintf(stderr, "rules_prog: bad request '%s'\n", argv[i]);
			return 2;
		}
		if (unit == 'K')
			size *= 1024;
		void *p;
		if (strcmp(who, "a") == 0) {
			p = caller_a(size);
		} else if (strcmp(who, "b") == 0) {
			p = caller_b(size);
		} else if (strcmp(who, "ga") == 0) {
			p = caller_a_explicit(size);
		} else if (strcmp(who, "na") == 0) {
			unsigned cookie = gfp_scope_push(GFP_NOFS);
			p = caller_a(size);
			gfp_scope_pop(cookie);
		} else if (strcmp(who, "sd") == 0 && size >= 1 && size <= sizeof(text)) {
			p = caller_strdup(size);
		} else if (strcmp(who, "thr") == 0) {
			p = in_worker(&workers[0], size);
		} else if (strcmp(who, "late") == 0) {
			p = in_worker(&workers[1], size);
		} else {
			fprintf(stderr, "rules_prog: bad request '%s'\n", argv[i]);
			return 2;
		}
		sink = p;
		printf("%s=%s\n", argv[i], p ? "ok" : "null");
	}
	for (int i = 0; i < 2; i++) {
		workers[i].size = 0;
		sem_post(&workers[i].go);
		pthread_join(workers[i].t, NULL);
	}
	return 0;
}
