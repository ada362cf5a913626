/*
 * sp_common.h - helpers shared by the slow-path test programs.
 *
 * Nothing here allocates once memory is tight: output goes through a stack
 * buffer and write(2), the block tables are static, and the helper thread
 * that frees memory is created (and has warmed its allocator state) before
 * any pressure exists.
 */
#ifndef SP_COMMON_H
#define SP_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../test_out.h"

#include "gfpshim.h"

static inline double sp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void sp_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

#define sp_out test_out /* tests/test_out.h */

#define sp_die(...)                                                                                \
	do {                                                                                       \
		sp_out(2, "sp: " __VA_ARGS__);                                                     \
		_exit(2);                                                                          \
	} while (0)

/* "NOFS|NOFAIL" -> flags; exits on an unknown name. Its own table, not
 * src/policy/flags.c: the names the cells are written in must not come from the
 * code whose decisions they check. */
static inline gfp_t sp_parse_flags(const char *s)
{
	static const struct {
		const char *name;
		gfp_t bits;
	} names[] = {
	    {"KERNEL", GFP_KERNEL},
	    {"NOFS", GFP_NOFS},
	    {"NOIO", GFP_NOIO},
	    {"NOWAIT", GFP_NOWAIT},
	    {"ATOMIC", GFP_ATOMIC},
	    {"NORETRY", GFP_NORETRY},
	    {"RETRY_MAYFAIL", GFP_RETRY_MAYFAIL},
	    {"NOFAIL", GFP_NOFAIL},
	    {"NOWARN", GFP_NOWARN},
	    {"HIGH", GFP_HIGH},
	    {"MEMALLOC", GFP_MEMALLOC},
	    {"NOMEMALLOC", GFP_NOMEMALLOC},
	    {"ZERO", GFP_ZERO},
	};
	gfp_t flags = 0;

	while (*s) {
		size_t len = strcspn(s, "|");
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len && !strncmp(s, names[i].name, len))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			sp_die("unknown flag in '%s'\n", s);
		flags |= names[i].bits;
		s += len;
		if (*s == '|')
			s++;
	}
	return flags;
}

/* Fill flags that take every byte of a budget, reserve included. */
#define SP_FILL_ALL (GFP_KERNEL | GFP_MEMALLOC | GFP_NORETRY | GFP_NOWARN)

#define SP_MAX_BLOCKS 65536
static void *sp_blocks[SP_MAX_BLOCKS];
static int sp_nblocks;

static int sp_fill_transient; /* failures a later call of the same fill undid */

/* Allocates @size blocks with @flags until @misses calls in a row fail;
 * returns how many were added. Exits when the table fills first: there was
 * no pressure. Under a real limit (RLIMIT_AS) one failure is not final:
 * jemalloc sometimes fails a call without trying the exact-size mapping
 * that serves the next one, nothing freed in between (strace shows it, about
 * one fill in a hundred on a loaded machine); a request made after such a
 * fill would not meet the pressure the test built. */
static inline int sp_fill_until(size_t size, gfp_t flags, int misses)
{
	int start = sp_nblocks, missed = 0;

	for (;;) {
		if (sp_nblocks == SP_MAX_BLOCKS) {
			sp_out(1, "result=nofill blocks=%d\n", sp_nblocks);
			_exit(3);
		}
		void *p = gfp_malloc(size, flags);
		if (p == NULL) {
			if (++missed >= misses)
				break;
			continue;
		}
		sp_fill_transient += missed != 0;
		missed = 0;
		memset(p, 0x5a, size < 64 ? size : 64);
		sp_blocks[sp_nblocks++] = p;
	}
	return sp_nblocks - start;
}

/* The budget's limit is the shim's own: its first failure is final. */
static inline int sp_fill(size_t size, gfp_t flags)
{
	return sp_fill_until(size, flags, 1);
}

/* How many times @pat occurs in the file GFP_LOG names (0 without one). Read
 * with read(2) into a stack buffer: no stdio, whose buffer is a malloc. */
static inline int sp_log_count(const char *pat)
{
	const char *path = getenv("GFP_LOG");
	size_t plen = strlen(pat), keep = 0;
	char buf[8192 + 256];
	int n = 0, fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	ssize_t r;

	if (fd < 0 || plen == 0 || plen > 256)
		return fd < 0 ? 0 : (close(fd), 0);
	while ((r = read(fd, buf + keep, sizeof(buf) - keep - 1)) > 0) {
		size_t len = keep + (size_t)r;

		buf[len] = '\0';
		for (char *p = buf; (p = strstr(p, pat)) != NULL; p += plen)
			n++;
		/* A match cut at the end of the buffer is counted next time. */
		keep = len < plen ? len : plen - 1;
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return n;
}

#define SP_CANARY "possible memory allocation deadlock"

/*
 * The freer: a thread that, each time it is armed, frees the last @count
 * blocks of sp_blocks (and @extra, if set): after sleeping @delay_ms, or,
 * armed with sp_freer_arm_canaries, once the request has printed @canaries
 * canaries (it has looped that long: a count of rounds, not a time) unless
 * it returned before (then after it returned). `freed` is set just before
 * the first free, `t_free` is its time.
 */
struct sp_freer {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int warm;  /* the thread has made its first allocations */
	int armed; /* generation asked for */
	int done;  /* generation finished */
	int delay_ms;
	int canaries, canaries_before; /* sp_freer_arm_canaries */
	atomic_int returned;           /* the request returned: stop waiting for canaries */
	int first, count;              /* sp_blocks[first .. first+count) */
	void *extra;
	int shrink; /* give the blocks back by realloc to 1 byte, not free */
	atomic_int freed;
	double t_free;
	pthread_t thread;
};

static void *(*volatile sp_malloc_fn)(size_t) = malloc;

/* One allocation and its free, which the compiler cannot fold away. */
static inline void sp_warm(size_t n)
{
	free(sp_malloc_fn(n));
}

static void *sp_freer_main(void *arg)
{
	struct sp_freer *f = arg;
	int gen = 0;

	/* Warm this thread's allocator state while memory is plentiful (through
	 * sp_warm: GCC drops a free(malloc(n)) it can see). */
	sp_warm(64);
	sp_warm(4096);
	pthread_mutex_lock(&f->lock);
	f->warm = 1;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	for (;;) {
		pthread_mutex_lock(&f->lock);
		while (f->armed == gen)
			pthread_cond_wait(&f->cond, &f->lock);
		gen = f->armed;
		pthread_mutex_unlock(&f->lock);
		if (gen < 0)
			return NULL;
		if (f->canaries) {
			while (!atomic_load(&f->returned) &&
			       sp_log_count(SP_CANARY) < f->canaries_before + f->canaries)
				sp_sleep_ms(1);
		} else {
			sp_sleep_ms(f->delay_ms);
		}
		f->t_free = sp_now_ms();
		atomic_store(&f->freed, 1);
		if (f->extra) {
			free(f->extra);
			f->extra = NULL;
		}
		for (int i = f->first; i < f->first + f->count; i++) {
			if (f->shrink) {
				sp_blocks[i] = realloc(sp_blocks[i], 1);
			} else {
				free(sp_blocks[i]);
				sp_blocks[i] = NULL;
			}
		}
		pthread_mutex_lock(&f->lock);
		f->done = gen;
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
	}
}

static inline void sp_freer_start(struct sp_freer *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	if (pthread_create(&f->thread, NULL, sp_freer_main, f))
		sp_die("pthread_create failed\n");
	/* Its warm-up must not meet the pressure the caller builds next. */
	pthread_mutex_lock(&f->lock);
	while (!f->warm)
		pthread_cond_wait(&f->cond, &f->lock);
	pthread_mutex_unlock(&f->lock);
}

static inline void sp_freer_arm_(struct sp_freer *f, int delay_ms, int canaries, int count,
                                 void *extra)
{
	int before = canaries ? sp_log_count(SP_CANARY) : 0;

	pthread_mutex_lock(&f->lock);
	if (count > sp_nblocks)
		count = sp_nblocks;
	f->delay_ms = delay_ms;
	f->canaries = canaries;
	f->canaries_before = before;
	atomic_store(&f->returned, 0);
	f->first = sp_nblocks - count;
	f->count = count;
	f->extra = extra;
	atomic_store(&f->freed, 0);
	f->armed++;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

/* Arms the freer: in @delay_ms it frees the last @count blocks and @extra. */
static inline void sp_freer_arm(struct sp_freer *f, int delay_ms, int count, void *extra)
{
	sp_freer_arm_(f, delay_ms, 0, count, extra);
}

/* Arms the freer to free them once the request made next has printed
 * @canaries canaries more than GFP_LOG holds now. */
static inline void sp_freer_arm_canaries(struct sp_freer *f, int canaries, int count, void *extra)
{
	sp_freer_arm_(f, 0, canaries, count, extra);
}

/* After the request returned: waits until the armed free happened; the
 * freed entries are compacted out. */
static inline void sp_freer_wait(struct sp_freer *f)
{
	atomic_store(&f->returned, 1);
	pthread_mutex_lock(&f->lock);
	while (f->done != f->armed)
		pthread_cond_wait(&f->cond, &f->lock);
	pthread_mutex_unlock(&f->lock);
	int j = 0;
	for (int i = 0; i < sp_nblocks; i++)
		if (sp_blocks[i])
			sp_blocks[j++] = sp_blocks[i];
	sp_nblocks = j;
}

/* Stops and joins the freer. A caller whose freer lives on main's stack must
 * call this before main returns: exit() reuses that stack while the freer,
 * just past its last broadcast, may still be on its way back to f->lock. */
static inline void sp_freer_stop(struct sp_freer *f)
{
	pthread_mutex_lock(&f->lock);
	f->armed = -1;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
}

#endif
