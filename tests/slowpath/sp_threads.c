/*
 * sp_threads.c - the budget across threads: what one thread allocates and
 * another frees, threads that only free, threads that end by pthread_exit.
 *
 *   sp_threads handoff [--exit]   fill the budget with NORETRY 4 KiB blocks
 *                                 until NULL; a thread that only frees gives
 *                                 back 256 KiB (and exits, with --exit); the
 *                                 next NORETRY 4 KiB must succeed
 *   sp_threads pool               producers allocate, consumers (threads that
 *                                 only free) free, in rounds
 *   sp_threads pexit              100 detached threads whose body is
 *                                 pthread_exit(NULL)
 *   sp_threads usage EXPECT       gfp_budget_usage() alone (see case_usage)
 *
 * Every case ends at a quiescent point where the budget's live bytes must
 * equal what jemalloc has handed out (stats.allocated less its internal
 * bytes, after every thread flushed its cache and an epoch): "budget: live L
 * jemalloc J" is printed and checked here.
 */
#include <jemalloc/jemalloc.h>

#include "../je_allocated.h"
#include "sp_common.h"

#define MAXBLK (1 << 16)
static void *blk[MAXBLK];
static int nblk;

static void flush_cache(void)
{
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
}

/* Prints and checks the equality; 0 when it holds. */
static int check_equal(const char *when)
{
	struct gfp_budget_usage u;
	if (gfp_budget_usage(&u) != 0 || u.limit == 0)
		sp_die("no budget: run under the shim with limit=\n");
	/* What jemalloc has handed out (je_allocated.h); threads that still run
	 * flush their caches before they park (flush_cache). */
	long je = je_allocated();
	if (je < 0)
		sp_die("mallctl stats.allocated failed\n");
	gfp_budget_usage(&u);
	sp_out(1, "budget %s: live %ld jemalloc %ld limit %ld\n", when, u.live, je, u.limit);
	if (u.live != je) {
		sp_out(2, "sp: budget %s: live %ld != jemalloc %ld (off by %ld)\n", when, u.live,
		       je, u.live - je);
		return 1;
	}
	return 0;
}

/* A thread that only frees: created before any pressure, it waits for its
 * turn, frees `bytes` worth of blocks from the table, and then either waits
 * to be stopped or exits. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int go, done, stop;
static size_t free_bytes;

static void *freer(void *arg)
{
	bool exit_after = arg != NULL;
	pthread_mutex_lock(&lock);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	size_t freed = 0;
	while (freed < free_bytes && nblk > 0) {
		free(blk[--nblk]);
		freed += 4096;
	}
	flush_cache();
	done = 1;
	pthread_cond_broadcast(&cond);
	while (!exit_after && !stop)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int case_handoff(bool exit_after)
{
	pthread_t t;
	free_bytes = 256 * 1024;
	if (pthread_create(&t, NULL, freer, exit_after ? &t : NULL) != 0)
		sp_die("pthread_create\n");
	while (nblk < MAXBLK && (blk[nblk] = gfp_malloc(4096, GFP_KERNEL | GFP_NORETRY)))
		nblk++;
	if (nblk == MAXBLK)
		sp_die("the budget never filled\n");
	sp_out(1, "filled: %d blocks of 4096\n", nblk);
	pthread_mutex_lock(&lock);
	go = 1;
	pthread_cond_broadcast(&cond);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	if (exit_after)
		pthread_join(t, NULL);
	void *p = gfp_malloc(4096, GFP_KERNEL | GFP_NORETRY);
	sp_out(1, "after the other thread freed 256 KiB: %s\n", p ? "ok" : "NULL");
	int bad = p == NULL;
	/* A plain request (too small to fail: it would loop, then OOM) too. */
	char *s = malloc(300);
	snprintf(s, 300, "plain malloc after the free: ok\n");
	sp_out(1, "%s", s);
	free(s);
	free(p);
	bad |= check_equal("at the end");
	if (!exit_after) {
		pthread_mutex_lock(&lock);
		stop = 1;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
		pthread_join(t, NULL);
	}
	while (nblk > 0)
		free(blk[--nblk]);
	bad |= check_equal("after all frees");
	return bad;
}

/* Producers allocate blocks of varied sizes into a ring; consumers, which
 * only free, take them out. Checked at the end of each round, when every
 * thread has flushed its cache and parked. */
#define RING      4096
#define ROUNDS    20
#define PER_ROUND 20000
static void *ring[RING];
static unsigned head, tail;
static pthread_mutex_t rlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rcond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t round_start, round_end, round_checked;
static int produced_left, consumed_left;
static unsigned long long sum_in, sum_out;

static void *producer(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&round_start);
		for (;;) {
			size_t n = 16 + (size_t)(rand_r(&seed) % 2000);
			unsigned char *p = malloc(n);
			if (!p)
				sp_die("producer: malloc(%zu) failed\n", n);
			p[0] = (unsigned char)n;
			pthread_mutex_lock(&rlock);
			while (head - tail == RING && produced_left > 0)
				pthread_cond_wait(&rcond, &rlock);
			if (produced_left == 0) {
				pthread_mutex_unlock(&rlock);
				free(p);
				break;
			}
			produced_left--;
			sum_in += p[0];
			ring[head++ % RING] = p;
			pthread_cond_broadcast(&rcond);
			pthread_mutex_unlock(&rlock);
		}
		flush_cache();
		pthread_barrier_wait(&round_end);
		pthread_barrier_wait(&round_checked); /* quiet until main has looked */
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&round_start);
		for (;;) {
			pthread_mutex_lock(&rlock);
			while (head == tail && consumed_left > 0)
				pthread_cond_wait(&rcond, &rlock);
			if (consumed_left == 0) {
				pthread_mutex_unlock(&rlock);
				break;
			}
			unsigned char *p = ring[tail++ % RING];
			consumed_left--;
			sum_out += p[0];
			pthread_cond_broadcast(&rcond);
			pthread_mutex_unlock(&rlock);
			free(p);
		}
		flush_cache();
		pthread_barrier_wait(&round_end);
		pthread_barrier_wait(&round_checked); /* quiet until main has looked */
	}
	return NULL;
}

static int case_pool(void)
{
	enum { NPROD = 2, NCONS = 2 };
	pthread_t t[NPROD + NCONS];
	pthread_barrier_init(&round_start, NULL, NPROD + NCONS + 1);
	pthread_barrier_init(&round_end, NULL, NPROD + NCONS + 1);
	pthread_barrier_init(&round_checked, NULL, NPROD + NCONS + 1);
	for (int i = 0; i < NPROD; i++)
		pthread_create(&t[i], NULL, producer, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < NCONS; i++)
		pthread_create(&t[NPROD + i], NULL, consumer, NULL);
	int bad = 0;
	for (int r = 0; r < ROUNDS; r++) {
		produced_left = consumed_left = PER_ROUND;
		pthread_barrier_wait(&round_start);
		pthread_barrier_wait(&round_end);
		if (sum_in != sum_out)
			sp_die("pool: checksum in %llu out %llu\n", sum_in, sum_out);
		char when[32];
		snprintf(when, sizeof(when), "round %d", r);
		bad |= check_equal(when);
		pthread_barrier_wait(&round_checked);
	}
	for (int i = 0; i < NPROD + NCONS; i++)
		pthread_join(t[i], NULL);
	bad |= check_equal("after the pool ended");
	return bad;
}

static void *exit_body(void *arg)
{
	(void)arg;
	pthread_exit(NULL);
}

static int case_pexit(void)
{
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < 100; i++) {
		pthread_t t;
		if (pthread_create(&t, &at, exit_body, NULL) != 0)
			sp_die("pthread_create\n");
	}
	/* Detached: wait until the last has left the process (its task
	 * directory is gone), at most 10 s. */
	for (int i = 0; i < 1000; i++) {
		char path[64];
		int n = 0;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)getpid());
		FILE *f = fopen(path, "r");
		char line[128];
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "Threads: %d", &n) == 1)
				break;
		if (f)
			fclose(f);
		if (n == 1)
			break;
		sp_sleep_ms(10);
	}
	sp_out(1, "100 detached threads ended by pthread_exit\n");
	return 0;
}

/* gfp_budget_usage() itself: EXPECT is "none" (no shim: -1, all 0), "idle"
 * (the shim, no budget: 0, all 0) or a limit in bytes. */
static int case_usage(const char *expect)
{
	struct gfp_budget_usage u = {-1, -1, -1};
	int bad = gfp_budget_usage(NULL) != -1;
	int rc = gfp_budget_usage(&u);
	sp_out(1, "usage: rc %d limit %ld live %ld reserved %ld\n", rc, u.limit, u.live,
	       u.reserved);
	if (strcmp(expect, "none") == 0)
		bad |= rc != -1 || u.limit || u.live || u.reserved;
	else if (strcmp(expect, "idle") == 0)
		bad |= rc != 0 || u.limit || u.live || u.reserved;
	else
		bad |= rc != 0 || u.limit != atol(expect) || u.live <= 0 || u.reserved != 0;
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		sp_die("usage: sp_threads handoff [--exit] | pool | pexit\n");
	int bad;
	if (strcmp(argv[1], "handoff") == 0)
		bad = case_handoff(argc > 2 && strcmp(argv[2], "--exit") == 0);
	else if (strcmp(argv[1], "pool") == 0)
		bad = case_pool();
	else if (strcmp(argv[1], "pexit") == 0)
		bad = case_pexit();
	else if (strcmp(argv[1], "usage") == 0 && argc > 2)
		bad = case_usage(argv[2]);
	else
		sp_die("unknown case %s\n", argv[1]);
	return bad;
}
