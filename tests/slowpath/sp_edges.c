/*
 * sp_edges - the budget's edges, one case per run (edges.sh sets the policy):
 *
 *   aligned ALIGN    aligned_alloc(ALIGN, 1) until NULL: usable=BYTES held
 *   reserve FLAGS    thread A reserves 4 MiB of the budget, thread B then fills
 *                    it with 4000-byte requests of FLAGS (KERNEL, HIGH or
 *                    ATOMIC), then A allocates: a=KB b=KB
 *   shrink           MEMALLOC fills the budget, then realloc shrinks a block of
 *                    16 KiB to 4 KiB: shrink=ok|null
 *   keyexit          fills the budget, lets 3 threads free 4 MiB each from a
 *                    key destructor's second round, fills again: before=KB
 *                    after=KB
 *   sigwait          while main waits for memory (wait= long), another thread
 *                    signals it 100 times, each once the handler of the one
 *                    before has run, and the handler allocates (ATOMIC) and
 *                    frees; then that thread frees: waited=SECONDS handler=N.
 *                    (Only while main waits: a signal that lands inside
 *                    jemalloc and allocates again is jemalloc's deadlock, not
 *                    the shim's.)
 *   wake_realloc     main waits for memory (wait= long); another thread
 *                    shrinks a block: late_ms=MS after the shrink
 * Main waits, for the other thread, once it has printed a canary to GFP_LOG
 * (the policy's canary.retries=1: one in its first round, just before it
 * waits), not after a time that a loaded machine can outlast.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sp_common.h"

#define MAXBLOCKS 100000

static void *blocks[MAXBLOCKS];
static int nblocks;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Takes 4000-byte blocks of `flags` until one fails; their kilobytes. */
static size_t fill(gfp_t flags)
{
	size_t got = 0;
	void *p;
	while (nblocks < MAXBLOCKS && (p = gfp_malloc(4000, flags | GFP_NORETRY | GFP_NOWARN))) {
		blocks[nblocks++] = p;
		got += 4000;
	}
	return got / 1024;
}

static void empty(void)
{
	while (nblocks)
		free(blocks[--nblocks]);
}

static int aligned(size_t align)
{
	size_t usable = 0;
	void *p;
	while (nblocks < MAXBLOCKS && (p = aligned_alloc(align, 1))) {
		blocks[nblocks++] = p;
		usable += malloc_usable_size(p);
	}
	empty();
	printf("usable=%zu\n", usable);
	return 0;
}

static pthread_barrier_t barrier;
static gfp_t b_flags;
static size_t a_kb, b_kb;

static void *reserver(void *arg)
{
	(void)arg;
	if (gfp_reserve(4 << 20, GFP_KERNEL) != 0) {
		fputs("sp_edges: gfp_reserve failed\n", stderr);
		exit(1);
	}
	pthread_barrier_wait(&barrier); /* B may fill */
	pthread_barrier_wait(&barrier); /* B is done */
	a_kb = fill(GFP_KERNEL);
	gfp_unreserve();
	return NULL;
}

static int reserve(const char *flags)
{
	b_flags = !strcmp(flags, "ATOMIC") ? GFP_ATOMIC
	          : !strcmp(flags, "HIGH") ? GFP_KERNEL | GFP_HIGH
	                                   : GFP_KERNEL;
	pthread_barrier_init(&barrier, NULL, 2);
	pthread_t a;
	pthread_create(&a, NULL, reserver, NULL);
	pthread_barrier_wait(&barrier);
	b_kb = fill(b_flags);
	pthread_barrier_wait(&barrier);
	pthread_join(a, NULL);
	empty();
	printf("a=%zu b=%zu\n", a_kb, b_kb);
	return 0;
}

static int shrink(void)
{
	void *big = malloc(16384);
	fill(GFP_KERNEL | GFP_MEMALLOC);
	void *q = realloc(big, 4096);
	printf("shrink=%s\n", q ? "ok" : "null");
	free(q ? q : big);
	empty();
	return 0;
}

static pthread_key_t key;
static __thread int rounds;

/* Frees the thread's cache in the second round of key destructors, after
 * the shim's own (see thread.c): later than the shim lets the thread go. */
static void late_free(void *cache)
{
	if (++rounds < 2) {
		pthread_setspecific(key, cache);
		return;
	}
	free(cache);
}

static void *cacher(void *arg)
{
	(void)arg;
	void *cache = malloc(4 << 20);
	if (cache)
		memset(cache, 1, 4096);
	pthread_setspecific(key, cache);
	return NULL;
}

static int keyexit(void)
{
	pthread_key_create(&key, late_free);
	size_t before = fill(GFP_KERNEL);
	empty();
	for (int i = 0; i < 3; i++) {
		pthread_t t;
		pthread_create(&t, NULL, cacher, NULL);
		pthread_join(t, NULL);
	}
	size_t after = fill(GFP_KERNEL);
	empty();
	printf("before=%zu after=%zu\n", before, after);
	return 0;
}

static long handler_runs; /* atomic */

static void on_alarm(int sig)
{
	(void)sig;
	void *p = gfp_malloc(16, GFP_ATOMIC | GFP_NOWARN);
	free(p);
	__atomic_add_fetch(&handler_runs, 1, __ATOMIC_RELEASE);
}

static volatile double freed_at;
static int free_mode; /* 0: free 8 blocks; 1: shrink 8 blocks with realloc */
static pthread_t waiter;
static bool signal_waiter;

static void *freer(void *arg)
{
	(void)arg;
	while (sp_log_count(SP_CANARY) < 1) /* the waiter is in its first round's wait */
		usleep(1000);
	for (int i = 0; signal_waiter && i < 100; i++) {
		long before = __atomic_load_n(&handler_runs, __ATOMIC_ACQUIRE);
		pthread_kill(waiter, SIGALRM);
		while (__atomic_load_n(&handler_runs, __ATOMIC_ACQUIRE) == before)
			usleep(100);
	}
	freed_at = now_s();
	for (int i = 0; i < 8; i++) {
		void **b = &blocks[nblocks - 1 - i];
		if (free_mode)
			*b = realloc(*b, 16);
		else
			free(*b), *b = NULL;
	}
	return NULL;
}

/* Main fills the budget and waits in a KERNEL request for the freer. */
static double wait_for_freer(int mode, double *late)
{
	free_mode = mode;
	waiter = pthread_self();
	fill(GFP_KERNEL);
	pthread_t t;
	pthread_create(&t, NULL, freer, NULL);
	double t0 = now_s();
	void *p = malloc(3000);
	double t1 = now_s();
	pthread_join(t, NULL);
	free(p);
	*late = t1 - freed_at;
	empty();
	return t1 - t0;
}

static int handler_allocs(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	signal_waiter = true;
	double late, waited = wait_for_freer(0, &late);
	printf("waited=%.3f handler=%ld\n", waited, handler_runs);
	return 0;
}

static int wake_realloc(void)
{
	double late;
	wait_for_freer(1, &late);
	printf("late_ms=%.0f\n", late * 1000);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	const char *c = argc > 1 ? argv[1] : "";
	if (!strcmp(c, "aligned") && argc == 3)
		return aligned(strtoul(argv[2], NULL, 0));
	if (!strcmp(c, "reserve") && argc == 3)
		return reserve(argv[2]);
	if (!strcmp(c, "shrink"))
		return shrink();
	if (!strcmp(c, "keyexit"))
		return keyexit();
	if (!strcmp(c, "sigwait"))
		return handler_allocs();
	if (!strcmp(c, "wake_realloc"))
		return wake_realloc();
	fputs("usage: sp_edges aligned ALIGN | reserve KERNEL|HIGH|ATOMIC | shrink | keyexit | "
	      "sigwait | wake_realloc\n",
	      stderr);
	return 2;
}
