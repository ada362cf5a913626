/*
 * torture.c - what real threaded programs do to an allocator, one case per
 * argv[1]: producer/consumer, a thread pool, detached threads, pthread_exit,
 * cancellation, fork from threads (and forks racing the unwinder), posix_spawn,
 * dlopen/dlclose, signals, and frees by threads that never allocate.
 *
 * Every case checks its data: each block is a stream drawn from its seed
 * (torture.h) and whoever frees it compares every byte first; a ledger
 * counts the blocks made and freed, and their tags, which must match at the
 * end. Every case ends: alarm() fires after TORTURE_SECONDS (30) and the
 * handler exits 124 naming the stage it was in. Threads are joined, or
 * waited for until the kernel has no task of theirs left, before main
 * returns.
 *
 * Environment (set by torture.sh):
 *   TORTURE_NULLS=ok   allocations may fail (fail.probability, a tight
 *                      limit=): a NULL is counted and the case goes on; else
 *                      a NULL fails the case
 *   TORTURE_LIMIT=N    the budget's limit= in bytes: check the budget at every
 *                      quiescent point (budget_check below)
 *   TORTURE_PLUGIN=P   the library the dlopen case loads
 *   TORTURE_HEADROOM=N fill the budget to N bytes below its watermark first
 *   TORTURE_SECONDS=S  the watchdog's bound (30)
 *   TORTURE_VERBOSE=1  print every budget check's result
 *
 * Exit status: 0 ok, 1 a check failed (the reason on stderr), 2 usage,
 * 124 the case did not end in time, 77 the case does not apply here.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gfpshim.h>

#include "torture.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

extern char **environ;

static const char *case_name = "?";
static const char *volatile stage = "start"; /* for the watchdog's message */
static unsigned timeout_s = 30;
static bool nulls_ok;
static bool verbose;      /* TORTURE_VERBOSE=1: every budget check's result */
static atomic_long nulls; /* allocations that returned NULL */
static int base_tasks;    /* tasks of the process when main began */

/* ------------------------------------------------------------------------
 * Messages and the watchdog: no stdio, no malloc (free-only threads and
 * signal handlers report too).
 * ---------------------------------------------------------------------- */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "torture %s: ", case_name);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n += m < (int)(sizeof(buf) - (size_t)n - 1) ? m : (int)(sizeof(buf) - (size_t)n - 2);
	buf[n++] = '\n';
	ssize_t w = write(2, buf, (size_t)n);
	(void)w;
}

#define die(...)                                                                                   \
	do {                                                                                       \
		say("FAIL: " __VA_ARGS__);                                                         \
		_exit(1);                                                                          \
	} while (0)

/* A failed budget check: reported, and the case goes on, so that one run
 * names every shape that drifts; main exits 1 at the end. */
static atomic_uint flunked;
#define flunk(...)                                                                                 \
	do {                                                                                       \
		say("FAIL: " __VA_ARGS__);                                                         \
		atomic_fetch_add(&flunked, 1);                                                     \
	} while (0)

static void on_watchdog(int sig)
{
	(void)sig;
	say("TIMEOUT: still running after %us, in stage '%s'", timeout_s, stage);
	_exit(124);
}

static void watchdog(unsigned seconds)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_watchdog;
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}

static void pause_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The number of tasks (threads) of this process, read without malloc. */
static int count_tasks(void)
{
	struct dent {
		uint64_t ino;
		int64_t off;
		unsigned short reclen;
		unsigned char type;
		char name[];
	};
	_Alignas(8) char buf[4096];
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die("open /proc/self/task: errno %d", errno);
	int count = 0;
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct dent *d = (const void *)(buf + off);
			if (d->name[0] != '.')
				count++;
			off += d->reclen;
		}
	}
	close(fd);
	return count;
}

/* Waits until the process has at most `extra` tasks more than at the start
 * of main: a detached thread is finished only once its task is gone (its
 * TLS destructors, jemalloc's cache flush and the shim's exit hook ran). */
static void wait_tasks(int extra)
{
	const char *was = stage;
	stage = "waiting for exited threads to leave the process";
	while (count_tasks() > base_tasks + extra)
		pause_us(500);
	stage = was;
}

/* pthread_create, tried again while it fails for want of memory in the
 * modes where allocations may fail. */
static void start(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	for (int tries = 0;; tries++) {
		int e = pthread_create(t, a, fn, arg);
		if (e == 0)
			return;
		if (!nulls_ok || (e != EAGAIN && e != ENOMEM) || tries == 1000)
			die("pthread_create: error %d after %d tries", e, tries + 1);
		atomic_fetch_add(&nulls, 1);
		pause_us(200);
	}
}

static void join(pthread_t t, void **ret)
{
	int e = pthread_join(t, ret);
	if (e)
		die("pthread_join: error %d", e);
}

static void *wait_for_cancel(void *arg)
{
	(void)arg;
	for (;;)
		pause_us(1000); /* nanosleep: a cancellation point */
	return NULL;
}

/* glibc loads libgcc_s the first time a thread is cancelled or calls
 * pthread_exit, and aborts ("libgcc_s.so.1 must be installed") when that
 * dlopen cannot allocate: under a tight budget or injected failures it
 * would, in the middle of a case. Load it first, while nothing fails. */
static void warm_unwinder(void)
{
	pthread_t t;
	start(&t, NULL, wait_for_cancel, NULL);
	pthread_cancel(t);
	join(t, NULL);
}

static void name_self(const char *name)
{
	pthread_setname_np(pthread_self(), name); /* for GFP_RULES thread: */
}

/* ------------------------------------------------------------------------
 * Blocks and the ledger
 * ---------------------------------------------------------------------- */

static atomic_ullong made_n, made_tag, gone_n, gone_tag;

static void ledger_add(const struct tt_blk *b)
{
	atomic_fetch_add(&made_n, 1);
	atomic_fetch_add(&made_tag, tt_tag(b->seed, b->len));
}

static void blk_check(const struct tt_blk *b, const char *who)
{
	if (b->magic != TT_MAGIC)
		die("%s: block %p has magic %#x, not %#x (%s)", who, (const void *)b, b->magic,
		    TT_MAGIC, b->magic == TT_DEAD ? "freed twice" : "overwritten");
	size_t at = tt_diff(b->data, b->len, b->seed);
	if (at != b->len)
		die("%s: block %p (%u bytes, seed %#llx) differs from its stream at byte %zu", who,
		    (const void *)b, b->len, (unsigned long long)b->seed, at);
}

static void *null_seen(size_t size)
{
	if (!nulls_ok)
		die("an allocation of %zu bytes returned NULL in a mode where none may fail", size);
	atomic_fetch_add(&nulls, 1);
	return NULL;
}

/* A block of len bytes of seed's stream, from one of the allocation entry
 * points (the seed picks it), or NULL when the allocation failed. */
static struct tt_blk *blk_new(size_t len, uint64_t seed)
{
	size_t size = sizeof(struct tt_blk) + len;
	struct tt_blk *b = NULL;
	switch ((seed >> 12) % 8) {
	case 0:
	case 1:
	case 2:
		b = malloc(size);
		break;
	case 3:
		b = calloc(1, size);
		if (b && (b->magic || (len && b->data[len - 1])))
			die("calloc(1, %zu) returned memory that is not zero", size);
		break;
	case 4: {
		void *p = NULL;
		b = posix_memalign(&p, 64, size) == 0 ? p : NULL;
		if (b && ((uintptr_t)b & 63))
			die("posix_memalign(64) returned %p", (void *)b);
		break;
	}
	case 5:
		b = aligned_alloc(256, (size + 255) & ~(size_t)255);
		if (b && ((uintptr_t)b & 255))
			die("aligned_alloc(256) returned %p", (void *)b);
		break;
	case 6: /* grown from a small block: realloc keeps the first bytes */
		b = malloc(sizeof(*b) + 8);
		if (b) {
			tt_init(b, 8 < len ? 8 : len, seed);
			struct tt_blk *g = realloc(b, size);
			if (!g) {
				free(b);
				b = NULL;
				break;
			}
			if (tt_diff(g->data, g->len, seed) != g->len)
				die("realloc(%zu) lost the block's first bytes", size);
			b = g;
		}
		break;
	default:
		b = gfp_malloc(size, GFP_KERNEL);
		break;
	}
	if (!b)
		return null_seen(size);
	tt_init(b, len, seed);
	ledger_add(b);
	return b;
}

/* Takes a block made elsewhere (the plugin) into the ledger. */
static void blk_adopt(struct tt_blk *b, const char *who)
{
	blk_check(b, who);
	ledger_add(b);
}

/* Checks and frees; allocates nothing (free-only threads use it). */
static void blk_free(struct tt_blk *b, const char *who)
{
	if (!b)
		return;
	blk_check(b, who);
	atomic_fetch_add(&gone_n, 1);
	atomic_fetch_add(&gone_tag, tt_tag(b->seed, b->len));
	b->magic = TT_DEAD;
	free(b);
}

/* realloc to len bytes: the kept prefix must survive, the rest is drawn
 * again. On failure the old block is returned intact. */
static struct tt_blk *blk_resize(struct tt_blk *b, size_t len, const char *who)
{
	blk_check(b, who);
	uint32_t old_len = b->len;
	uint64_t seed = b->seed;
	struct tt_blk *n = realloc(b, sizeof(*b) + len);
	if (!n) {
		null_seen(sizeof(*b) + len);
		blk_check(b, "a failed realloc's block");
		return b;
	}
	size_t keep = len < old_len ? len : old_len;
	if (tt_diff(n->data, keep, seed) != keep)
		die("%s: realloc %u -> %zu bytes lost data at byte %zu", who, old_len, len,
		    tt_diff(n->data, keep, seed));
	atomic_fetch_add(&gone_n, 1);
	atomic_fetch_add(&gone_tag, tt_tag(seed, old_len));
	n->len = (uint32_t)len;
	tt_fill(n->data, len, seed);
	ledger_add(n);
	return n;
}

/* A size: mostly small, some pages, a few large (past jemalloc's thread
 * cache) ones. */
static size_t pick_len(uint64_t *s)
{
	uint64_t r = tt_next(s);
	switch (r % 16) {
	case 0:
		return 4096 + (r >> 8) % (60 * 1024);
	case 1:
		return (r >> 8) % 64 == 0 ? 200 * 1024 + (r >> 16) % (100 * 1024) : 2048;
	default:
		return (r >> 8) % 1024;
	}
}

static void ledger_check(void)
{
	unsigned long long mn = atomic_load(&made_n), gn = atomic_load(&gone_n);
	unsigned long long mt = atomic_load(&made_tag), gt = atomic_load(&gone_tag);
	if (mn != gn || mt != gt)
		die("ledger: %llu blocks made, %llu freed; tags %#llx made, %#llx freed", mn, gn,
		    mt, gt);
}

/* ------------------------------------------------------------------------
 * jemalloc's side and the budget check
 *
 * jemalloc's mallctl is looked up, not linked: the same program runs under
 * the shim (which brings jemalloc), without it and under TSan, where there
 * is no jemalloc and no budget to check.
 * ---------------------------------------------------------------------- */

static int (*je_mallctl)(const char *, void *, size_t *, void *, size_t);
static long long limit_b, min_free_b, batch_b;
static unsigned probes;
static long long last_off; /* the last check's distance from the watermark */

#define PROBE_SIZE 4096
#define PROBE_MAX  (64 * 1024 * 1024 / PROBE_SIZE + 1024)
static void *probe_slot[PROBE_MAX]; /* static: the probe allocates nothing else */

/* Each thread's jemalloc cache holds blocks the program freed and
 * jemalloc's stats.allocated still counts, and blocks it took from its arena
 * ahead of need: every thread that is alive at a quiescent point flushes it
 * (pool workers do before they park), and an exited thread's was flushed
 * when it exited. Then stats.allocated is exactly what the program holds.
 * MALLOC_CONF=tcache:false would do too, but it takes the thread caches,
 * and the cross-thread frees through them, out of the torture. */
static void flush_cache(void)
{
	if (je_mallctl)
		je_mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
}

/* What the program holds by jemalloc's count: stats.allocated after an
 * epoch, less its internal allocations (each live thread's cache, about
 * 28 KiB, is one), which stats.allocated includes and the per-thread
 * counters the budget reads do not. 4096 is MALLCTL_ARENAS_ALL. */
static long long je_allocated(void)
{
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch);
	je_mallctl("epoch", &epoch, &sz, &epoch, sz);
	size_t allocated = 0, internal = 0;
	sz = sizeof(allocated);
	if (je_mallctl("stats.allocated", &allocated, &sz, NULL, 0) != 0 ||
	    je_mallctl("stats.arenas.4096.internal", &internal, &sz, NULL, 0) != 0)
		die("mallctl stats.allocated failed: jemalloc without statistics?");
	return (long long)allocated - (long long)internal;
}

static void budget_setup(void)
{
	*(void **)&je_mallctl = dlsym(RTLD_DEFAULT, "mallctl");
	const char *l = getenv("TORTURE_LIMIT");
	if (!l || !*l || !je_mallctl || !gfp_active())
		return;
	limit_b = atoll(l);
	if (limit_b <= 0)
		return;
	/* README "The kernel's behaviour": min_free is 1 % of limit, at least
	 * 64 KiB, at most half; a batch is limit/1024 within [4 KiB, 256 KiB]. */
	min_free_b = limit_b / 100 < 64 * 1024 ? 64 * 1024 : limit_b / 100;
	if (min_free_b > limit_b / 2)
		min_free_b = limit_b / 2;
	batch_b = limit_b / 1024;
	batch_b = batch_b < 4096 ? 4096 : batch_b > 256 * 1024 ? 256 * 1024 : batch_b;
}

/*
 * The budget across threads: at a quiescent point (every thread the case started is
 * gone, or parked after flushing its cache) the budget's live bytes must
 * equal what the program holds, whatever thread allocated or freed.
 *
 * Two ways. gfp_budget_usage() gives the budget's live bytes, which must
 * equal what jemalloc says the program holds, to the byte. And the budget
 * is filled with GFP_NOWAIT|GFP_NOWARN requests of 4 KiB, which fail at once
 * when the live bytes plus the request would pass the ordinary watermark
 * (limit - min_free; near it the decision is exact, under the budget's
 * lock, and NOWAIT has no share of min_free). The program is alone, so at
 * the first NULL the budget's live bytes L satisfy wm - 4096 < L <= wm,
 * and what jemalloc says the program holds then must be L. A budget that
 * kept bytes a free-only or exited thread gave back (the drift) refuses
 * early; one that lost bytes lets the program past its watermark. The slack
 * allowed is one batch, the most a thread's count may lag by in the
 * documented design, although the exact decision should not need it.
 */
static void budget_check(const char *where)
{
	if (!limit_b)
		return;
	const char *was = stage;
	stage = where;
	flush_cache();
	long long slack = batch_b;
	struct gfp_budget_usage u;
	if (gfp_budget_usage(&u) == 0 && u.limit) {
		long long held = je_allocated();
		gfp_budget_usage(&u);
		if (u.live != held)
			flunk(
			    "budget at %s: gfp_budget_usage() says %ld live bytes, jemalloc holds "
			    "%lld (off by %lld)",
			    where, u.live, held, u.live - held);
	}
	size_t n = 0;
	while (n < PROBE_MAX) {
		void *p = gfp_malloc(PROBE_SIZE, GFP_NOWAIT | GFP_NOWARN);
		if (!p)
			break;
		probe_slot[n++] = p;
	}
	flush_cache();
	long long held = je_allocated();
	for (size_t i = 0; i < n; i++)
		free(probe_slot[i]);
	long long wm = limit_b - min_free_b;
	if (n == PROBE_MAX)
		die("budget at %s: %zu NOWAIT requests of %d bytes never failed; jemalloc holds "
		    "%lld, the watermark is %lld",
		    where, n, PROBE_SIZE, held, wm);
	long long off = held - wm;
	if (off < -(PROBE_SIZE + slack) || off > slack)
		flunk("budget at %s: the budget refused a %d-byte NOWAIT request when the program "
		      "held %lld bytes (jemalloc's stats.allocated less internal, after flush and "
		      "epoch, %zu probe blocks included): %lld %s the watermark %lld (limit %lld - "
		      "min_free %lld), slack %lld; the budget counts %s (%+lld since the last "
		      "check)",
		      where, PROBE_SIZE, held, n, off < 0 ? -off : off, off < 0 ? "below" : "above",
		      wm, limit_b, min_free_b, slack,
		      off < 0 ? "bytes the program no longer holds (drift)"
		              : "fewer bytes than the program holds",
		      off - last_off);
	last_off = off;
	if (verbose)
		say("budget at %s: jemalloc holds %lld at the first refusal, %+lld from the "
		    "watermark",
		    where, held, off);
	probes++;
	stage = was;
}

/* TORTURE_HEADROOM=N (tight modes): main fills the budget up to N bytes
 * below its watermark before the case starts and holds that ballast until
 * it ends, so that every case, whatever its size, runs where its requests
 * wait and fail. */
static void *ballast[PROBE_MAX];
static size_t ballast_n;

static void ballast_take(void)
{
	const char *h = getenv("TORTURE_HEADROOM");
	if (!h || !limit_b)
		return;
	size_t n = 0;
	while (n < PROBE_MAX && (ballast[n] = gfp_malloc(PROBE_SIZE, GFP_NOWAIT | GFP_NOWARN)))
		n++;
	size_t keep = (size_t)atoll(h) / PROBE_SIZE;
	keep = n > keep ? n - keep : 0;
	while (n > keep)
		free(ballast[--n]);
	ballast_n = n;
}

static void ballast_drop(void)
{
	while (ballast_n)
		free(ballast[--ballast_n]);
}

/* ------------------------------------------------------------------------
 * A bounded queue of blocks; it allocates nothing.
 * ---------------------------------------------------------------------- */

#define QCAP 64
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t nonempty, nonfull;
	struct tt_blk *slot[QCAP];
	unsigned head, count;
	bool closed;
};

static void q_init(struct queue *q)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->nonempty, NULL);
	pthread_cond_init(&q->nonfull, NULL);
}

static void q_destroy(struct queue *q)
{
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->nonempty);
	pthread_cond_destroy(&q->nonfull);
}

static void q_put(struct queue *q, struct tt_blk *b)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == QCAP)
		pthread_cond_wait(&q->nonfull, &q->lock);
	q->slot[(q->head + q->count++) % QCAP] = b;
	pthread_cond_signal(&q->nonempty);
	pthread_mutex_unlock(&q->lock);
}

/* The next block, or NULL once the queue is closed and empty. */
static struct tt_blk *q_get(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && !q->closed)
		pthread_cond_wait(&q->nonempty, &q->lock);
	struct tt_blk *b = NULL;
	if (q->count) {
		b = q->slot[q->head];
		q->head = (q->head + 1) % QCAP;
		q->count--;
		pthread_cond_signal(&q->nonfull);
	}
	pthread_mutex_unlock(&q->lock);
	return b;
}

static void q_close(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_broadcast(&q->nonempty);
	pthread_mutex_unlock(&q->lock);
}

/* A list of blocks under a lock, for blocks one thread keeps for another. */
struct stash {
	pthread_mutex_t lock;
	struct tt_blk *head;
	unsigned count;
};

static void stash_put(struct stash *s, struct tt_blk *b)
{
	pthread_mutex_lock(&s->lock);
	b->next = s->head;
	s->head = b;
	s->count++;
	pthread_mutex_unlock(&s->lock);
}

static struct tt_blk *stash_take(struct stash *s)
{
	pthread_mutex_lock(&s->lock);
	struct tt_blk *b = s->head;
	if (b) {
		s->head = b->next;
		s->count--;
	}
	pthread_mutex_unlock(&s->lock);
	return b;
}

static unsigned stash_free_all(struct stash *s, const char *who)
{
	unsigned n = 0;
	struct tt_blk *b;
	while ((b = stash_take(s)) != NULL) {
		blk_free(b, who);
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------------
 * prodcons: producers allocate, consumers that never allocate free, one
 * consumer reallocs what it gets first; every 16th block is kept for main,
 * which frees it after the producers and consumers are gone.
 * ---------------------------------------------------------------------- */

#define PC_PROD  3
#define PC_CONS  3
#define PC_ITEMS 1500

static struct queue pc_q;
static struct stash pc_kept = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static void *pc_producer(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	name_self("tt-prod");
	uint64_t s = 0x1000 + id;
	for (unsigned i = 0; i < PC_ITEMS; i++) {
		struct tt_blk *b = blk_new(pick_len(&s), tt_next(&s));
		if (b)
			q_put(&pc_q, b);
	}
	return NULL;
}

static void *pc_consumer(void *arg)
{
	bool resizer = (uintptr_t)arg == 0;
	name_self(resizer ? "tt-resize" : "tt-cons");
	uint64_t s = 0x2000;
	struct tt_blk *b;
	while ((b = q_get(&pc_q)) != NULL) {
		if (resizer)
			b = blk_resize(b, pick_len(&s), "resizing consumer");
		if (b->seed % 16 == 0) {
			blk_check(b, "consumer keeping a block");
			stash_put(&pc_kept, b);
		} else {
			blk_free(b, "consumer");
		}
	}
	return NULL;
}

static void case_prodcons(void)
{
	for (int round = 0; round < 2; round++) {
		pthread_t p[PC_PROD], c[PC_CONS];
		q_init(&pc_q);
		stage = "prodcons: running";
		for (uintptr_t i = 0; i < PC_CONS; i++)
			start(&c[i], NULL, pc_consumer, (void *)i);
		for (uintptr_t i = 0; i < PC_PROD; i++)
			start(&p[i], NULL, pc_producer, (void *)(i + 8 * (uintptr_t)round));
		for (int i = 0; i < PC_PROD; i++)
			join(p[i], NULL);
		q_close(&pc_q);
		for (int i = 0; i < PC_CONS; i++)
			join(c[i], NULL);
		q_destroy(&pc_q);
		budget_check(
		    "prodcons: all joined, main holds the kept blocks of exited producers");
		stash_free_all(&pc_kept, "main freeing kept blocks");
		budget_check("prodcons: main freed the kept blocks");
	}
}

/* ------------------------------------------------------------------------
 * pool: persistent workers take main's input blocks, free them and make an
 * output block each; a reaper thread that never allocates frees the
 * outputs. Between rounds, with every thread alive and parked, the budget
 * is checked.
 * ---------------------------------------------------------------------- */

#define POOL_W      4
#define POOL_TASKS  600
#define POOL_ROUNDS 3

static struct queue pool_in, pool_out;
static struct tt_blk park_token; /* not a block: "flush your cache and park" */
static pthread_barrier_t pool_parked, pool_resume;
static atomic_uint pool_done, pool_dropped;

static void park(void)
{
	flush_cache();
	pthread_barrier_wait(&pool_parked);
	pthread_barrier_wait(&pool_resume);
}

static void *pool_worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	name_self("tt-worker");
	uint64_t s = 0x3000 + id;
	/* Held by a live thread across every quiescent point. */
	struct tt_blk *scratch = blk_new(10000 + id, tt_next(&s));
	struct tt_blk *in;
	while ((in = q_get(&pool_in)) != NULL) {
		if (in == &park_token) {
			park();
			continue;
		}
		blk_check(in, "worker reading its input");
		struct tt_blk *out = blk_new(pick_len(&s), in->seed ^ 0x5a5a);
		blk_free(in, "worker freeing main's input");
		if (out)
			q_put(&pool_out, out);
		else
			atomic_fetch_add(&pool_dropped, 1);
	}
	blk_free(scratch, "worker's scratch");
	return NULL;
}

static void *pool_reaper(void *arg)
{
	(void)arg;
	name_self("tt-reaper");
	struct tt_blk *b;
	while ((b = q_get(&pool_out)) != NULL) {
		if (b == &park_token) {
			park();
			continue;
		}
		blk_free(b, "reaper");
		atomic_fetch_add(&pool_done, 1);
	}
	return NULL;
}

static void case_pool(void)
{
	pthread_t w[POOL_W], r;
	q_init(&pool_in);
	q_init(&pool_out);
	pthread_barrier_init(&pool_parked, NULL, POOL_W + 2);
	pthread_barrier_init(&pool_resume, NULL, POOL_W + 2);
	for (uintptr_t i = 0; i < POOL_W; i++)
		start(&w[i], NULL, pool_worker, (void *)i);
	start(&r, NULL, pool_reaper, NULL);
	uint64_t s = 0x4000;
	unsigned sent = 0;
	for (int round = 0; round < POOL_ROUNDS; round++) {
		stage = "pool: running";
		for (int i = 0; i < POOL_TASKS; i++) {
			struct tt_blk *b = blk_new(pick_len(&s), tt_next(&s));
			if (b) {
				q_put(&pool_in, b);
				sent++;
			}
		}
		stage = "pool: waiting for the round's outputs";
		while (atomic_load(&pool_done) + atomic_load(&pool_dropped) < sent)
			pause_us(200);
		stage = "pool: parking";
		for (int i = 0; i < POOL_W; i++)
			q_put(&pool_in, &park_token);
		q_put(&pool_out, &park_token);
		pthread_barrier_wait(&pool_parked);
		budget_check("pool: 4 workers and a free-only reaper alive and parked");
		pthread_barrier_wait(&pool_resume);
	}
	q_close(&pool_in);
	for (int i = 0; i < POOL_W; i++)
		join(w[i], NULL);
	q_close(&pool_out);
	join(r, NULL);
	pthread_barrier_destroy(&pool_parked);
	pthread_barrier_destroy(&pool_resume);
	q_destroy(&pool_in);
	q_destroy(&pool_out);
	budget_check("pool: all joined");
}

/* ------------------------------------------------------------------------
 * detached: detached threads, half of which only free what main gave them,
 * half allocate, free some and hand the rest to main.
 * ---------------------------------------------------------------------- */

#define DT_N     96
#define DT_BATCH 24
#define DT_GIVE  4
#define DT_HAND  8

struct dt_arg {
	unsigned id;
	struct tt_blk *given[DT_GIVE];
	struct tt_blk *handed[DT_HAND];
};
static struct dt_arg dt_args[DT_N];
static atomic_int dt_done;

static void *dt_body(void *arg)
{
	struct dt_arg *a = arg;
	for (int i = 0; i < DT_GIVE; i++)
		blk_free(a->given[i], "detached thread freeing main's block");
	if (a->id % 2) {
		uint64_t s = 0x5000 + a->id;
		for (int i = 0; i < 2 * DT_HAND; i++) {
			struct tt_blk *b = blk_new(pick_len(&s), tt_next(&s));
			if (i < DT_HAND)
				a->handed[i] = b;
			else if (b)
				blk_free(blk_resize(b, pick_len(&s), "detached"), "detached");
		}
	}
	atomic_fetch_add(&dt_done, 1);
	return NULL;
}

static void case_detached(void)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	uint64_t s = 0x6000;
	for (int round = 0; round < 2; round++) {
		atomic_store(&dt_done, 0);
		stage = "detached: running";
		for (unsigned i = 0; i < DT_N; i++) {
			struct dt_arg *a = &dt_args[i];
			memset(a, 0, sizeof(*a));
			a->id = i;
			for (int k = 0; k < DT_GIVE; k++)
				a->given[k] = blk_new(pick_len(&s), tt_next(&s));
			pthread_t t;
			start(&t, &attr, dt_body, a);
			if ((i + 1) % DT_BATCH == 0) /* at most a batch at a time */
				while (atomic_load(&dt_done) < (int)i + 1)
					pause_us(200);
		}
		while (atomic_load(&dt_done) < DT_N)
			pause_us(200);
		wait_tasks(0);
		budget_check("detached: every detached thread gone, main holds what they handed");
		for (int i = 0; i < DT_N; i++)
			for (int k = 0; k < DT_HAND; k++)
				blk_free(dt_args[i].handed[k],
				         "main freeing a detached thread's block");
		budget_check("detached: main freed them");
	}
	pthread_attr_destroy(&attr);
}

/* ------------------------------------------------------------------------
 * pthread_exit: detached threads whose body is pthread_exit(NULL),
 * threads that exit with blocks in thread-specific data whose destructors
 * free them (and allocate: after the thread's exit hooks), joinable threads
 * that exit with a block for their joiner.
 * ---------------------------------------------------------------------- */

#define PX_BARE 100
#define PX_TSD  40
#define PX_JOIN 20

static pthread_key_t px_key_free, px_key_alloc;
static atomic_int px_done;

static void px_free_value(void *v)
{
	blk_free(v, "TSD destructor");
}

static void px_alloc_value(void *v)
{
	/* Runs after the thread left its body: allocate, check, free. */
	uint64_t s = (uint64_t)(uintptr_t)v;
	struct tt_blk *b = blk_new(pick_len(&s), s);
	blk_free(b, "TSD destructor's own block");
	atomic_fetch_add(&px_done, 1);
}

static void *px_bare(void *arg)
{
	(void)arg;
	atomic_fetch_add(&px_done, 1);
	pthread_exit(NULL);
}

static __attribute__((noinline, noreturn)) void px_deep_exit(void *ret, int depth)
{
	if (depth)
		px_deep_exit(ret, depth - 1);
	pthread_exit(ret);
}

static void *px_tsd(void *arg)
{
	uint64_t s = 0x7000 + (uintptr_t)arg;
	struct tt_blk *b = blk_new(pick_len(&s), tt_next(&s));
	pthread_setspecific(px_key_free, b);
	pthread_setspecific(px_key_alloc, (void *)(uintptr_t)(s | 1));
	px_deep_exit(NULL, 3);
}

static void *px_join(void *arg)
{
	uint64_t s = 0x8000 + (uintptr_t)arg;
	struct tt_blk *b = blk_new(pick_len(&s), tt_next(&s));
	px_deep_exit(b, 2);
}

static void case_pthread_exit(void)
{
	pthread_key_create(&px_key_free, px_free_value);
	pthread_key_create(&px_key_alloc, px_alloc_value);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int round = 0; round < 2; round++) {
		atomic_store(&px_done, 0);
		stage = "pthread_exit: detached threads calling pthread_exit(NULL)";
		pthread_t t, j[PX_JOIN];
		for (uintptr_t i = 0; i < PX_BARE; i++)
			start(&t, &attr, px_bare, NULL);
		stage = "pthread_exit: threads exiting with TSD destructors";
		for (uintptr_t i = 0; i < PX_TSD; i++)
			start(&t, &attr, px_tsd, (void *)(i + 100 * (uintptr_t)round));
		stage = "pthread_exit: joinable threads exiting with a block";
		for (uintptr_t i = 0; i < PX_JOIN; i++)
			start(&j[i], NULL, px_join, (void *)(i + 100 * (uintptr_t)round));
		for (int i = 0; i < PX_JOIN; i++) {
			void *ret;
			join(j[i], &ret);
			if (ret == PTHREAD_CANCELED)
				die("a joinable thread was cancelled");
			blk_free(ret, "main freeing a block passed through pthread_exit");
		}
		stage = "pthread_exit: waiting for the detached threads";
		while (atomic_load(&px_done) < PX_BARE + PX_TSD)
			pause_us(200);
		wait_tasks(0);
		budget_check("pthread_exit: every thread gone");
	}
	pthread_attr_destroy(&attr);
	pthread_key_delete(px_key_free);
	pthread_key_delete(px_key_alloc);
}

/* ------------------------------------------------------------------------
 * cancel: threads cancelled while they allocate (pthread_testcancel), sleep
 * or wait on a condition; cleanup handlers check and free what they hold.
 * malloc is not a cancellation point (POSIX), so a thread cancelled while
 * its request waits for memory must not be cancelled inside it.
 * ---------------------------------------------------------------------- */

#define CN_N    12
#define CN_RING 48

struct cn_list {
	struct tt_blk *ring[CN_RING];
	pthread_mutex_t *held; /* a kind-2 thread's mutex, to unlock */
};
static pthread_mutex_t cn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cn_cond = PTHREAD_COND_INITIALIZER;
static atomic_uint cn_ready;

static void cn_cleanup(void *arg)
{
	struct cn_list *l = arg;
	for (int i = 0; i < CN_RING; i++)
		blk_free(l->ring[i], "cancellation cleanup");
	if (l->held)
		pthread_mutex_unlock(l->held);
}

static void *cn_body(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	name_self("tt-cancel");
	struct cn_list l;
	memset(&l, 0, sizeof(l));
	uint64_t s = 0x9000 + id;
	pthread_cleanup_push(cn_cleanup, &l);
	atomic_fetch_add(&cn_ready, 1);
	for (unsigned i = 0;; i++) {
		unsigned k = i % CN_RING;
		blk_free(l.ring[k], "cancel ring");
		l.ring[k] = NULL;
		/* Kind 0 allocates as fast as it can, large enough to fill a
		 * tight budget, so that it is cancelled while it waits. */
		size_t len = id % 3 == 0 ? 1024 + tt_next(&s) % (60 * 1024) : pick_len(&s);
		l.ring[k] = blk_new(len, tt_next(&s));
		if (id % 3 == 0) {
			pthread_testcancel();
		} else if (id % 3 == 1) {
			pause_us(50);
		} else if (i % 8 == 7) {
			pthread_mutex_lock(&cn_lock);
			l.held = &cn_lock;
			pthread_cond_wait(&cn_cond, &cn_lock); /* never signalled */
			l.held = NULL;
			pthread_mutex_unlock(&cn_lock);
		}
	}
	pthread_cleanup_pop(1);
	return NULL;
}

static void case_cancel(void)
{
	uint64_t s = 0xa000;
	for (int round = 0; round < 3; round++) {
		pthread_t t[CN_N];
		atomic_store(&cn_ready, 0);
		stage = "cancel: running";
		for (uintptr_t i = 0; i < CN_N; i++)
			start(&t[i], NULL, cn_body, (void *)(i + CN_N * (uintptr_t)round));
		while (atomic_load(&cn_ready) < CN_N)
			pause_us(200);
		for (int i = 0; i < CN_N; i++) {
			pause_us((long)(tt_next(&s) % 3000));
			stage = "cancel: cancelling";
			int e = pthread_cancel(t[i]);
			if (e)
				die("pthread_cancel: error %d", e);
			stage = "cancel: joining a cancelled thread";
			void *ret;
			join(t[i], &ret);
			if (ret != PTHREAD_CANCELED)
				die("thread %d ended with %p, not PTHREAD_CANCELED", i, ret);
		}
		budget_check("cancel: every thread cancelled and joined");
	}
}

/* ------------------------------------------------------------------------
 * fork: threads churn blocks while other threads (and main) fork; each
 * child checks a block the parent made, allocates, starts and joins a
 * thread, and leaves with exit() (the shim's exit path in a child of a
 * threaded process).
 * ---------------------------------------------------------------------- */

#define FK_CHURN   3
#define FK_FORKERS 2
#define FK_FORKS   10

static atomic_int stop_churn;
static struct tt_blk *fk_parent_blk;

static void *churn(void *arg)
{
	name_self("tt-churn");
	uint64_t s = 0xb000 + (uintptr_t)arg;
	struct tt_blk *ring[32] = {0};
	while (!atomic_load(&stop_churn)) {
		unsigned k = tt_next(&s) % 32;
		blk_free(ring[k], "churn");
		ring[k] = blk_new(pick_len(&s), tt_next(&s));
	}
	for (int k = 0; k < 32; k++)
		blk_free(ring[k], "churn");
	return NULL;
}

static void *fk_child_thread(void *arg)
{
	uint64_t s = (uintptr_t)arg;
	for (int i = 0; i < 200; i++)
		blk_free(blk_new(pick_len(&s), tt_next(&s)), "forked child's thread");
	return NULL;
}

static _Noreturn void fk_child(uint64_t seed)
{
	alarm(timeout_s); /* fork cleared the parent's */
	stage = "fork: in a child";
	blk_check(fk_parent_blk, "child checking the parent's block");
	uint64_t s = seed;
	for (int i = 0; i < 300; i++)
		blk_free(blk_new(pick_len(&s), tt_next(&s)), "forked child");
	/* TSan does not support threads started after a multi-threaded fork. */
	if (!UNDER_TSAN) {
		pthread_t t;
		start(&t, NULL, fk_child_thread, (void *)(uintptr_t)(seed + 1));
		join(t, NULL);
	}
	exit(0);
}

/* fork(), or -1 when it failed for want of memory in a mode where
 * allocations may fail (counted); any other failure fails the case. */
static pid_t fork_checked(const char *who)
{
	pid_t pid = fork();
	if (pid < 0) {
		if (!nulls_ok || (errno != ENOMEM && errno != EAGAIN))
			die("%s: fork: errno %d", who, errno);
		atomic_fetch_add(&nulls, 1);
	}
	return pid;
}

static void fork_some(uint64_t seed, int n, const char *who)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork_checked(who);
		if (pid < 0)
			continue;
		if (pid == 0)
			fk_child(seed + (uint64_t)i);
		int st;
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				die("%s: waitpid: errno %d", who, errno);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("%s: child %d of %d %s %d%s", who, i, n,
			    WIFEXITED(st) ? "exited" : "was killed by signal",
			    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			    WIFEXITED(st) && WEXITSTATUS(st) == 124 ? " (timed out: deadlock?)"
			                                            : "");
	}
}

static void *fk_forker(void *arg)
{
	name_self("tt-forker");
	fork_some(0xc000 + 100 * (uintptr_t)arg, FK_FORKS, "forking thread");
	return NULL;
}

static void case_fork(void)
{
	/* TSan's own locks across fork() from one of several threads hang the
	 * child (and its watchdog with it): there is nothing to check there. */
	if (UNDER_TSAN) {
		say("SKIP: fork from threads is not supported under ThreadSanitizer");
		exit(77);
	}
	fk_parent_blk = blk_new(50000, 0xf0f0);
	if (!fk_parent_blk)
		fk_parent_blk = blk_new(16, 0xf0f1); /* may fail too: then skip */
	if (!fk_parent_blk)
		return;
	pthread_t c[FK_CHURN], f[FK_FORKERS];
	atomic_store(&stop_churn, 0);
	stage = "fork: running";
	for (uintptr_t i = 0; i < FK_CHURN; i++)
		start(&c[i], NULL, churn, (void *)i);
	for (uintptr_t i = 0; i < FK_FORKERS; i++)
		start(&f[i], NULL, fk_forker, (void *)i);
	fork_some(0xd000, FK_FORKS / 2, "main");
	for (int i = 0; i < FK_FORKERS; i++)
		join(f[i], NULL);
	atomic_store(&stop_churn, 1);
	for (int i = 0; i < FK_CHURN; i++)
		join(c[i], NULL);
	budget_check("fork: all joined, every child reaped");
	blk_free(fk_parent_blk, "main");
}

/* ------------------------------------------------------------------------
 * forkrace: a dozen threads fork at once, thousands of times in all, while
 * others allocate from ever new call paths (under a stack filter each new
 * path is unwound frame by frame, through the unwinder's shared state).
 * Each child allocates from a path of its own, so its first unwind takes
 * that shared state too, and leaves. A child forked while another thread
 * held a lock there waits for ever, with every signal blocked: the parent
 * waits for each child with a generous deadline, and kills and names one
 * that does not end. The forks stop early on a slow machine, well before
 * the watchdog: fewer chances to catch a hang, never a false one.
 * ---------------------------------------------------------------------- */

#define FR_FORKERS 12
#define FR_FORKS   300 /* each */
#define FR_CHURN   2
#define FR_DEPTH   14

static atomic_int fr_go, fr_stop, fr_forks, fr_hung;
static struct timespec fr_t0;

/* Seconds since the case began. */
static long fr_elapsed(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - fr_t0.tv_sec);
}

static unsigned fr_a(unsigned depth, uint64_t *s, const char *who);
static unsigned fr_b(unsigned depth, uint64_t *s, const char *who);

/* Allocates and frees at the bottom of a recursion FR_DEPTH deep through
 * fr_a and fr_b, the stream s choosing each level's: another choice is
 * another sequence of return addresses, a call path the stack filter has
 * not seen yet, 2^FR_DEPTH of them. */
static unsigned fr_step(unsigned depth, uint64_t *s, const char *who)
{
	if (depth == 0) { /* small: the time goes to the unwinding */
		struct tt_blk *b = blk_new(tt_next(s) % 256, tt_next(s));
		blk_free(b, who);
		return b != NULL;
	}
	return (tt_next(s) & 1) ? fr_a(depth - 1, s, who) : fr_b(depth - 1, s, who);
}

static __attribute__((noinline)) unsigned fr_a(unsigned depth, uint64_t *s, const char *who)
{
	unsigned r = fr_step(depth, s, who);
	__asm__ volatile("" : : "r"(r) : "memory"); /* no tail call */
	return r + 1;
}

static __attribute__((noinline)) unsigned fr_b(unsigned depth, uint64_t *s, const char *who)
{
	unsigned r = fr_step(depth, s, who);
	__asm__ volatile("" : : "r"(r) : "memory");
	return r + 2;
}

static void *fr_churn(void *arg)
{
	name_self("tt-frchurn");
	uint64_t s = 0x15000 + 1000 * (uintptr_t)arg;
	while (!atomic_load(&fr_stop))
		fr_step(FR_DEPTH, &s, "churn");
	return NULL;
}

static void fr_fork_some(uint64_t seed, const char *who)
{
	/* A child's deadline and the time left to fork: a hung child is
	 * named before the watchdog fires. */
	long child_s = timeout_s / 2, fork_s = timeout_s / 4;
	for (int i = 0; i < FR_FORKS && fr_elapsed() < fork_s && !atomic_load(&fr_hung); i++) {
		pid_t pid = fork_checked(who);
		if (pid < 0)
			continue;
		if (pid == 0) {
			uint64_t s = seed + (uint64_t)i;
			fr_step(FR_DEPTH, &s, "forked child");
			_exit(0);
		}
		atomic_fetch_add(&fr_forks, 1);
		int st = 0;
		pid_t w;
		long since = fr_elapsed();
		while ((w = waitpid(pid, &st, WNOHANG)) == 0) {
			if (fr_elapsed() - since >= child_s) {
				/* Each forker kills its own before the case fails:
				 * nothing is left behind. */
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				say("FAIL: %s: child %d (pid %d) did not end in %lds: hung (a lock "
				    "held at fork?); killed",
				    who, i, (int)pid, child_s);
				atomic_fetch_add(&fr_hung, 1);
				return;
			}
			pause_us(100);
		}
		if (w < 0)
			die("%s: waitpid: errno %d", who, errno);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("%s: child %d %s %d", who, i,
			    WIFEXITED(st) ? "exited" : "was killed by signal",
			    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
}

static void *fr_forker(void *arg)
{
	name_self("tt-frforker");
	while (!atomic_load(&fr_go))
		pause_us(100);
	fr_fork_some(0x16000 + 1000 * (uintptr_t)arg, "forking thread");
	return NULL;
}

static void case_forkrace(void)
{
	if (UNDER_TSAN) { /* as case_fork */
		say("SKIP: fork from threads is not supported under ThreadSanitizer");
		exit(77);
	}
	clock_gettime(CLOCK_MONOTONIC, &fr_t0);
	pthread_t c[FR_CHURN], f[FR_FORKERS];
	stage = "forkrace: running";
	for (uintptr_t i = 0; i < FR_CHURN; i++)
		start(&c[i], NULL, fr_churn, (void *)i);
	for (uintptr_t i = 0; i < FR_FORKERS; i++)
		start(&f[i], NULL, fr_forker, (void *)i);
	atomic_store(&fr_go, 1);
	for (int i = 0; i < FR_FORKERS; i++)
		join(f[i], NULL);
	atomic_store(&fr_stop, 1);
	for (int i = 0; i < FR_CHURN; i++)
		join(c[i], NULL);
	if (atomic_load(&fr_hung))
		die("%d of %d children hung", atomic_load(&fr_hung), atomic_load(&fr_forks));
	if (verbose)
		say("%d forks", atomic_load(&fr_forks));
	budget_check("forkrace: all joined, every child reaped");
}

/* ------------------------------------------------------------------------
 * spawn: threads posix_spawn this program ("spawn-child SEED", under the
 * same environment, so under the shim too) while others churn.
 * ---------------------------------------------------------------------- */

#define SP_SPAWNERS 3
#define SP_SPAWNS   5

static void *sp_spawner(void *arg)
{
	name_self("tt-spawner");
	for (int i = 0; i < SP_SPAWNS; i++) {
		char seed[32];
		snprintf(seed, sizeof(seed), "%llu",
		         (unsigned long long)(0xe000 + 100 * (uintptr_t)arg + (unsigned)i));
		char *argv[] = {(char *)"torture", (char *)"spawn-child", seed, NULL};
		pid_t pid;
		int e = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
		if (e) {
			if (nulls_ok && (e == ENOMEM || e == EAGAIN)) {
				atomic_fetch_add(&nulls, 1);
				continue;
			}
			die("posix_spawn: error %d", e);
		}
		int st;
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				die("waitpid: errno %d", errno);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("spawned child %s %d",
			    WIFEXITED(st) ? "exited" : "was killed by signal",
			    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	return NULL;
}

static void case_spawn(void)
{
	pthread_t c[2], sp[SP_SPAWNERS];
	atomic_store(&stop_churn, 0);
	stage = "spawn: running";
	for (uintptr_t i = 0; i < 2; i++)
		start(&c[i], NULL, churn, (void *)(i + 10));
	for (uintptr_t i = 0; i < SP_SPAWNERS; i++)
		start(&sp[i], NULL, sp_spawner, (void *)i);
	for (int i = 0; i < SP_SPAWNERS; i++)
		join(sp[i], NULL);
	atomic_store(&stop_churn, 1);
	for (int i = 0; i < 2; i++)
		join(c[i], NULL);
	budget_check("spawn: all joined, every child reaped");
}

/* The spawned program: a fresh process under the same shim and policy. */
static void case_spawn_child(uint64_t seed)
{
	pthread_t t[2];
	for (uintptr_t i = 0; i < 2; i++)
		start(&t[i], NULL, fk_child_thread, (void *)(uintptr_t)(seed + i));
	uint64_t s = seed;
	struct tt_blk *keep[64];
	for (int i = 0; i < 64; i++)
		keep[i] = blk_new(pick_len(&s), tt_next(&s));
	for (int i = 0; i < 2; i++)
		join(t[i], NULL);
	budget_check("spawn-child: its threads joined");
	for (int i = 0; i < 64; i++)
		blk_free(keep[i], "spawned child");
}

/* ------------------------------------------------------------------------
 * dlopen: threads load and unload an allocating library at once, use its
 * dynamic TLS, and free the blocks it made after it is gone, often on
 * another thread.
 * ---------------------------------------------------------------------- */

#define DL_THREADS 3
#define DL_LOOPS   25

static const char *dl_path;
/* ld.so runs constructors and destructors under its own lock, which TSan
 * does not see: under TSan only, loads and unloads take this one too. */
static pthread_mutex_t dl_serial = PTHREAD_MUTEX_INITIALIZER;

static void *dl_open(void)
{
	if (UNDER_TSAN)
		pthread_mutex_lock(&dl_serial);
	void *h = dlopen(dl_path, RTLD_NOW | RTLD_LOCAL);
	if (UNDER_TSAN)
		pthread_mutex_unlock(&dl_serial);
	return h;
}

static void dl_close(void *h)
{
	if (UNDER_TSAN)
		pthread_mutex_lock(&dl_serial);
	dlclose(h);
	if (UNDER_TSAN)
		pthread_mutex_unlock(&dl_serial);
}
static struct stash dl_cross = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static void *dl_body(void *arg)
{
	name_self("tt-dlopen");
	uint64_t s = 0xf000 + (uintptr_t)arg;
	for (int i = 0; i < DL_LOOPS; i++) {
		void *h = dl_open();
		if (!h) {
			if (nulls_ok) {
				atomic_fetch_add(&nulls, 1);
				continue;
			}
			die("dlopen %s: %s", dl_path, dlerror());
		}
		int (*table_ok)(void);
		struct tt_blk *(*make)(size_t, uint64_t);
		uint64_t (*tls)(uint64_t);
		*(void **)&table_ok = dlsym(h, "plugin_table_ok");
		*(void **)&make = dlsym(h, "plugin_make");
		*(void **)&tls = dlsym(h, "plugin_tls");
		if (!table_ok || !make || !tls)
			die("dlsym in %s: %s", dl_path, dlerror());
		int ok = table_ok();
		if (ok == 0 || (ok < 0 && !nulls_ok))
			die("the plugin's table is %s", ok ? "missing" : "damaged");
		for (int k = 0; k < 6; k++) {
			size_t len = pick_len(&s);
			struct tt_blk *b = make(len, tt_next(&s));
			if (!b) {
				null_seen(len);
				continue;
			}
			blk_adopt(b, "a block the plugin made");
			stash_put(&dl_cross, b);
		}
		/* glibc exits 127 ("cannot allocate memory for thread-local
		 * data") when a thread's dynamic TLS block cannot be allocated:
		 * no program copes with that, so only where nothing fails. */
		if (!nulls_ok && tls(0) == 0)
			die("the plugin's TLS block lost its contents");
		dl_close(h);
		/* Free what some thread's plugin made, likely unloaded by now. */
		for (int k = 0; k < 5; k++)
			blk_free(stash_take(&dl_cross), "freeing a plugin block after dlclose");
	}
	return NULL;
}

static void case_dlopen(void)
{
	dl_path = getenv("TORTURE_PLUGIN");
	if (!dl_path || !*dl_path) {
		say("SKIP: TORTURE_PLUGIN is not set");
		exit(77);
	}
	pthread_t t[DL_THREADS];
	stage = "dlopen: running";
	for (uintptr_t i = 0; i < DL_THREADS; i++)
		start(&t[i], NULL, dl_body, (void *)i);
	for (int i = 0; i < DL_THREADS; i++)
		join(t[i], NULL);
	stash_free_all(&dl_cross, "main freeing plugin blocks");
	budget_check("dlopen: all joined, the plugin unloaded");
}

/* ------------------------------------------------------------------------
 * signals: a sender thread signals allocating workers all the time.
 * SIGUSR1's handler does not allocate and interrupts anything, the shim's
 * waits included. SIGUSR2's handler allocates, so workers keep it blocked
 * except while they sleep in ppoll (jemalloc itself is not
 * async-signal-safe, as tests/preload/signal_malloc.c says).
 * ---------------------------------------------------------------------- */

#define SG_WORKERS 3
#define SG_ITERS   6000

static atomic_uint sg_usr1, sg_usr2, sg_finished;
static atomic_int sg_stop;

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	atomic_fetch_add(&sg_usr1, 1);
	errno = saved;
}

static void on_usr2(int sig)
{
	(void)sig;
	int saved = errno;
	atomic_fetch_add(&sg_usr2, 1);
	/* TSan reports any allocation in a handler; the harness is what it
	 * checks, and this handler's allocations are the shim's business. */
	if (!UNDER_TSAN) {
		uint64_t s = atomic_load(&sg_usr2);
		blk_free(blk_new(pick_len(&s), s), "SIGUSR2 handler");
	}
	errno = saved;
}

static void *sg_worker(void *arg)
{
	name_self("tt-signalled");
	uint64_t s = 0x11000 + (uintptr_t)arg;
	sigset_t open_mask;
	pthread_sigmask(SIG_BLOCK, NULL, &open_mask);
	sigdelset(&open_mask, SIGUSR2);
	struct tt_blk *ring[16] = {0};
	for (unsigned i = 0; i < SG_ITERS; i++) {
		unsigned k = tt_next(&s) % 16;
		blk_free(ring[k], "signalled worker");
		ring[k] = blk_new(pick_len(&s), tt_next(&s));
		if (i % 64 == 63) {
			struct timespec ts = {0, 100000};
			ppoll(NULL, 0, &ts, &open_mask); /* SIGUSR2 may run here */
		}
	}
	for (int k = 0; k < 16; k++)
		blk_free(ring[k], "signalled worker");
	atomic_fetch_add(&sg_finished, 1);
	return NULL;
}

struct sg_targets {
	pthread_t t[SG_WORKERS + 1]; /* the workers and main */
};

static void *sg_sender(void *arg)
{
	struct sg_targets *tg = arg;
	for (unsigned n = 0; !atomic_load(&sg_stop); n++) {
		pthread_t to = tg->t[n % (SG_WORKERS + 1)];
		pthread_kill(to, SIGUSR1); /* a finished, unjoined worker: ESRCH */
		if (n % 3 == 0)
			pthread_kill(to, SIGUSR2);
		pause_us(30);
	}
	return NULL;
}

static void case_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1; /* no SA_RESTART: interrupted calls see EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
	/* USR2 blocked everywhere but in the workers' ppoll; threads inherit. */
	sigset_t usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr2, NULL);

	struct sg_targets tg;
	pthread_t sender;
	stage = "signals: running";
	for (uintptr_t i = 0; i < SG_WORKERS; i++)
		start(&tg.t[i], NULL, sg_worker, (void *)i);
	tg.t[SG_WORKERS] = pthread_self();
	start(&sender, NULL, sg_sender, &tg);
	/* main allocates too, interrupted by SIGUSR1 only */
	uint64_t s = 0x12000;
	while (atomic_load(&sg_finished) < SG_WORKERS)
		blk_free(blk_new(pick_len(&s), tt_next(&s)), "main under signals");
	atomic_store(&sg_stop, 1);
	join(sender, NULL);
	for (int i = 0; i < SG_WORKERS; i++)
		join(tg.t[i], NULL);
	/* What is still pending for main is delivered here, then nothing. */
	signal(SIGUSR1, SIG_IGN);
	pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
	signal(SIGUSR2, SIG_IGN);
	if (atomic_load(&sg_usr1) == 0 || atomic_load(&sg_usr2) == 0)
		die("signals were not delivered: %u SIGUSR1, %u SIGUSR2", atomic_load(&sg_usr1),
		    atomic_load(&sg_usr2));
	budget_check("signals: all joined");
}

/* ------------------------------------------------------------------------
 * xfree: the shapes of the budget across threads. A thread allocates and exits, a
 * thread that never allocates frees; the other way round; the budget
 * filled, a free-only thread frees 256 KiB and the next NORETRY 4 KiB
 * request must succeed; two threads free each other's blocks.
 * ---------------------------------------------------------------------- */

#define XF_BLOCKS 512

static struct tt_blk *xf_blk[XF_BLOCKS];
static pthread_mutex_t xf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t xf_cond = PTHREAD_COND_INITIALIZER;
static int xf_step; /* under xf_lock */

static void xf_set(int step)
{
	pthread_mutex_lock(&xf_lock);
	xf_step = step;
	pthread_cond_broadcast(&xf_cond);
	pthread_mutex_unlock(&xf_lock);
}

static void xf_wait(int step)
{
	pthread_mutex_lock(&xf_lock);
	while (xf_step < step)
		pthread_cond_wait(&xf_cond, &xf_lock);
	pthread_mutex_unlock(&xf_lock);
}

static void *xf_alloc_all(void *arg)
{
	name_self("tt-allocator");
	uint64_t s = 0x13000 + (uintptr_t)arg;
	for (int i = 0; i < XF_BLOCKS; i++)
		xf_blk[i] = blk_new(4000, tt_next(&s));
	return NULL;
}

/* Frees every block, then flushes its cache, says so (step 1) and lives
 * until main says step 2. */
static void *xf_free_all(void *arg)
{
	(void)arg;
	name_self("tt-freer");
	for (int i = 0; i < XF_BLOCKS; i++) {
		blk_free(xf_blk[i], "free-only thread");
		xf_blk[i] = NULL;
	}
	flush_cache();
	xf_set(1);
	xf_wait(2);
	return NULL;
}

/* The allocator that stays alive while another thread frees its blocks. */
static void *xf_alloc_stay(void *arg)
{
	xf_alloc_all(arg);
	flush_cache();
	xf_set(1);
	xf_wait(3);
	return NULL;
}

static void *xf_free_exit(void *arg)
{
	(void)arg;
	for (int i = 0; i < XF_BLOCKS; i++) {
		blk_free(xf_blk[i], "free-only thread");
		xf_blk[i] = NULL;
	}
	return NULL;
}

/* Point 1 literally: blocks main filled the budget with, freed by a thread
 * that does nothing else. */
#define XF_FILL_MAX PROBE_MAX
static void *xf_fill[XF_FILL_MAX];
static size_t xf_filled, xf_given_from;

static void *xf_free_fill(void *arg)
{
	(void)arg;
	for (size_t i = xf_given_from; i < xf_filled; i++)
		free(xf_fill[i]);
	flush_cache();
	xf_set(1);
	xf_wait(2);
	return NULL;
}

static void xf_point1(void)
{
	stage = "xfree: filling the budget with NORETRY requests";
	xf_filled = 0;
	while (xf_filled < XF_FILL_MAX) {
		void *p = gfp_malloc(4096, GFP_KERNEL | GFP_NORETRY | GFP_NOWARN);
		if (!p)
			break;
		xf_fill[xf_filled++] = p;
	}
	if (xf_filled == XF_FILL_MAX || xf_filled < 64)
		die("filling the budget took %zu requests of 4 KiB", xf_filled);
	xf_given_from = xf_filled - 64; /* 256 KiB */
	xf_set(0);
	pthread_t f;
	start(&f, NULL, xf_free_fill, NULL);
	xf_wait(1);
	stage = "xfree: the NORETRY request after a free-only thread freed 256 KiB";
	void *p = gfp_malloc(4096, GFP_KERNEL | GFP_NORETRY | GFP_NOWARN);
	if (!p)
		flunk("a free-only thread (alive) freed 256 KiB of a full budget, but the next "
		      "NORETRY request of 4 KiB still fails");
	free(p);
	xf_set(2);
	join(f, NULL);
	p = gfp_malloc(4096, GFP_KERNEL | GFP_NORETRY | GFP_NOWARN);
	if (!p)
		flunk("after the free-only thread exited, a NORETRY request of 4 KiB fails in a "
		      "budget 256 KiB below full");
	free(p);
	/* A plain small malloc too: it loops and OOM-kills when the budget
	 * drifted (the printf). */
	p = malloc(100);
	if (!p)
		null_seen(100);
	free(p);
	for (size_t i = 0; i < xf_given_from; i++)
		free(xf_fill[i]);
}

/* Two threads in lockstep: each sends a block of its own, receives one of
 * the peer's, resizes some and frees it. */
static struct queue pp_q[2];
static struct tt_blk pp_none; /* not a block: the sender's allocation failed */

static void *xf_pingpong(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	name_self("tt-pingpong");
	uint64_t s = 0x14000 + me;
	for (int i = 0; i < 1500; i++) {
		struct tt_blk *b = blk_new(pick_len(&s), tt_next(&s));
		q_put(&pp_q[1 - me], b ? b : &pp_none);
		b = q_get(&pp_q[me]);
		if (b == &pp_none)
			continue;
		if (i % 4 == 0)
			b = blk_resize(b, pick_len(&s), "pingpong");
		blk_free(b, "pingpong: the peer's block");
	}
	return NULL;
}

static void case_xfree(void)
{
	pthread_t a, f;
	/* 1: allocator exits, then a free-only thread frees, and lives. */
	stage = "xfree: free-only thread frees an exited thread's blocks";
	xf_set(0);
	start(&a, NULL, xf_alloc_all, (void *)1);
	join(a, NULL);
	start(&f, NULL, xf_free_all, NULL);
	xf_wait(1);
	budget_check("xfree: a free-only thread (alive) freed an exited thread's 2 MiB");
	xf_set(2);
	join(f, NULL);
	budget_check("xfree: the free-only thread exited");

	/* 2: allocator alive while a free-only thread frees and exits. */
	stage = "xfree: free-only thread frees a live thread's blocks";
	xf_set(0);
	start(&a, NULL, xf_alloc_stay, (void *)2);
	xf_wait(1);
	start(&f, NULL, xf_free_exit, NULL);
	join(f, NULL);
	budget_check("xfree: an exited free-only thread freed a live thread's 2 MiB");
	xf_set(3);
	join(a, NULL);
	budget_check("xfree: both gone");

	/* 3: a thread frees what another allocated, under a budget. */
	if (limit_b) {
		xf_point1();
		budget_check("xfree: after the filled budget was freed by two threads");
	}

	/* 4: two threads freeing and resizing each other's blocks. */
	stage = "xfree: pingpong";
	for (int i = 0; i < 2; i++)
		q_init(&pp_q[i]);
	start(&a, NULL, xf_pingpong, (void *)0);
	start(&f, NULL, xf_pingpong, (void *)1);
	join(a, NULL);
	join(f, NULL);
	for (int i = 0; i < 2; i++)
		q_destroy(&pp_q[i]);
	budget_check("xfree: pingpong joined");
}

/* ------------------------------------------------------------------------ */

struct tcase {
	const char *name;
	void (*run)(void);
};

static const struct tcase cases[] = {
    {"prodcons", case_prodcons}, {"pool", case_pool},
    {"detached", case_detached}, {"pthread_exit", case_pthread_exit},
    {"cancel", case_cancel},     {"fork", case_fork},
    {"spawn", case_spawn},       {"dlopen", case_dlopen},
    {"signals", case_signals},   {"xfree", case_xfree},
    {"forkrace", case_forkrace},
};

static int usage(void)
{
	char list[512] = "";
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcat(list, " ");
		strcat(list, cases[i].name);
	}
	say("usage: torture CASE (one of%s)", list);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	case_name = argv[1];
	const char *t = getenv("TORTURE_SECONDS");
	if (t && atoi(t) > 0)
		timeout_s = (unsigned)atoi(t);
	watchdog(timeout_s);
	const char *n = getenv("TORTURE_NULLS");
	nulls_ok = n && !strcmp(n, "ok");
	verbose = getenv("TORTURE_VERBOSE") != NULL;
	budget_setup();
	warm_unwinder();
	/* After a thread was started: TSan starts its own thread then. */
	base_tasks = count_tasks();

	if (!strcmp(case_name, "spawn-child")) {
		if (argc < 3)
			return usage();
		case_spawn_child(strtoull(argv[2], NULL, 0));
		ledger_check();
		if (atomic_load(&flunked))
			die("%u budget checks failed", atomic_load(&flunked));
		return 0;
	}
	const struct tcase *c = NULL;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(cases[i].name, case_name))
			c = &cases[i];
	if (!c)
		return usage();
	budget_check("start, before the case");
	ballast_take();
	c->run();
	stage = "end";
	wait_tasks(0);
	ballast_drop();
	ledger_check();
	if (atomic_load(&flunked))
		die("%u budget checks failed (each is named above)", atomic_load(&flunked));
	flush_cache();
	/* One line on stdout, for the driver. */
	char line[256];
	int len =
	    snprintf(line, sizeof(line),
	             "torture %s: ok pid=%d blocks=%llu nulls=%ld budget_checks=%u held=%lld\n",
	             case_name, (int)getpid(), (unsigned long long)atomic_load(&made_n),
	             atomic_load(&nulls), probes, je_mallctl ? je_allocated() : -1LL);
	if (write(1, line, (size_t)len) != len)
		return 1;
	return 0;
}
