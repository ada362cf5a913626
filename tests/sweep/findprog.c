/*
 * findprog - programs whose error paths make one bug out of many failed
 * allocations, for the tests of how gfp-sweep groups its findings
 * (tests/sweep/findings.sh). Each mode is one program:
 *
 *   paths      50 allocations, each from a call path of its own, unchecked;
 *              one function then writes to every buffer: one NULL
 *              dereference, 50 ways to reach it
 *   wrapper    20 callers of an xmalloc whose failure handler crashes
 *   libc       one function makes two allocations and hands one to strlen,
 *              the other to memcpy; and one call instruction calls strcmp
 *              or strcasecmp through a table with a third: two libc crashes
 *              under one program frame, each way
 *   message    a record per allocation; a failed one is skipped with
 *              "Memory allocation failed" on stderr, the exit status stays 0
 *   silent     20 allocations of the header's parts, each from a call path
 *              of its own; any failure drops the header, exit status 0
 *   threads    4 threads allocate from their own call paths; main then
 *              writes to every buffer
 *   hang       3 allocations whose failure drops a job that main waits for
 *   hostile    as message, but the message and the records hold an escape
 *              sequence, a carriage return, a byte that is no UTF-8 and a
 *              right-to-left override
 *
 * Without a failure each prints the same output every run and exits 0.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NOINLINE __attribute__((noinline))
/* A compiler barrier: each generated function keeps its own call. */
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

#define REPEAT10(X, m) X(m##0) X(m##1) X(m##2) X(m##3) X(m##4) X(m##5) X(m##6) X(m##7) X(m##8) X(m##9)
#define REPEAT20(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) REPEAT10(X, 1)
#define REPEAT50(X) REPEAT20(X) REPEAT10(X, 2) REPEAT10(X, 3) REPEAT10(X, 4)

static char *bufs[64];

/* ------------------------------------------------------------------------
 * paths: 50 allocations from 50 functions, one writer
 * ---------------------------------------------------------------------- */

#define ALLOC_FN(n)                                                                              \
	static NOINLINE void alloc_##n(void)                                                   \
	{                                                                                        \
		bufs[n] = malloc(32 + n);                                                        \
		KEEP(bufs[n]);                                                                   \
	}
REPEAT50(ALLOC_FN)
#define ALLOC_REF(n) alloc_##n,
static void (*const allocs[])(void) = {REPEAT50(ALLOC_REF)};

/* The one bug: no buffer is checked. */
static NOINLINE void fill(int n)
{
	for (int i = 0; i < n; i++)
		bufs[i][0] = (char)('a' + i % 26);
}

static int paths(void)
{
	for (int i = 0; i < 50; i++)
		allocs[i]();
	fill(50);
	long sum = 0;
	for (int i = 0; i < 50; i++)
		sum += bufs[i][0];
	printf("sum %ld\n", sum);
	return 0;
}

/* ------------------------------------------------------------------------
 * wrapper: an xmalloc whose failure handler crashes
 * ---------------------------------------------------------------------- */

static char *volatile last_error; /* never set: the handler writes through NULL */

static NOINLINE void out_of_memory(size_t n)
{
	last_error[0] = (char)n;
	exit(1);
}

static NOINLINE void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		out_of_memory(n);
	return p;
}

#define USER_FN(n)                                                                               \
	static NOINLINE void user_##n(void)                                                    \
	{                                                                                        \
		bufs[n] = xmalloc(16 + n);                                                       \
		KEEP(bufs[n]);                                                                   \
	}
REPEAT20(USER_FN)
#define USER_REF(n) user_##n,
static void (*const users[])(void) = {REPEAT20(USER_REF)};

static int wrapper(void)
{
	for (int i = 0; i < 20; i++)
		users[i]();
	printf("20 buffers\n");
	return 0;
}

/* ------------------------------------------------------------------------
 * libc: two libc crashes under one program frame
 * ---------------------------------------------------------------------- */

/* Two allocations, two libc functions handed their NULL. */
static NOINLINE size_t copy_name(const char *name)
{
	char *a = strdup(name);
	char *b = malloc(64);
	size_t n = strlen(a);
	memcpy(b, name, n + 1);
	KEEP(b);
	free(a);
	free(b);
	return n;
}

/* One allocation in a loop, one call instruction: strcmp or strcasecmp. */
static int (*const compare[])(const char *, const char *) = {strcmp, strcasecmp};

static NOINLINE int lookup(int i)
{
	char *key = malloc(16);
	if (key) /* the bug: a NULL key is compared all the same */
		snprintf(key, 16, "k%d", i);
	int r = compare[i % 2](key, "key");
	free(key);
	return r;
}

static int libc_crashes(void)
{
	size_t n = copy_name("inventory");
	int r = 0;
	for (int i = 0; i < 3; i++)
		r += lookup(i) != 0;
	printf("%zu %d\n", n, r);
	return 0;
}

/* ------------------------------------------------------------------------
 * message, hostile: a record skipped with a message, exit status 0
 * ---------------------------------------------------------------------- */

static int records(bool hostile)
{
	static const char *const items[] = {"spade", "rake", "hoe", "trowel", "shears"};
	for (int i = 0; i < 5; i++) {
		char *line = malloc(64);
		if (!line) {
			if (hostile)
				fprintf(stderr, "\033[31mMemory \377allocation\r failed \342\200\256%d\n",
				        i);
			else
				fprintf(stderr, "Memory allocation failed\n");
			continue;
		}
		snprintf(line, 64, hostile ? "%d \033[1m%s\342\200\256 \377\n" : "%d %s\n", i + 1,
		         items[i]);
		fputs(line, stdout);
		free(line);
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * silent: 20 parts of a header, any one missing drops it
 * ---------------------------------------------------------------------- */

#define PART_FN(n)                                                                               \
	static NOINLINE char *part_##n(void)                                                   \
	{                                                                                        \
		char *p = malloc(8);                                                             \
		if (p)                                                                           \
			snprintf(p, 8, "%c", 'A' + n);                                           \
		return p;                                                                        \
	}
REPEAT20(PART_FN)
#define PART_REF(n) part_##n,
static char *(*const parts[])(void) = {REPEAT20(PART_REF)};

static int silent(void)
{
	char header[64] = "";
	bool whole = true;
	for (int i = 0; i < 20; i++) {
		char *p = parts[i]();
		if (!p) {
			whole = false; /* the bug: the header goes, nobody is told */
			continue;
		}
		strcat(header, p);
		free(p);
	}
	if (whole)
		printf("== %s ==\n", header);
	printf("body\n");
	return 0;
}

/* ------------------------------------------------------------------------
 * threads: 4 threads allocate, main writes to every buffer
 * ---------------------------------------------------------------------- */

#define WORKER_FN(n)                                                                             \
	static NOINLINE void *worker_##n(void *arg)                                            \
	{                                                                                        \
		(void)arg;                                                                       \
		bufs[n] = malloc(24 + n);                                                        \
		KEEP(bufs[n]);                                                                   \
		return NULL;                                                                     \
	}
WORKER_FN(0)
WORKER_FN(1)
WORKER_FN(2)
WORKER_FN(3)
static void *(*const workers[])(void *) = {worker_0, worker_1, worker_2, worker_3};

static int threads(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, workers[i], NULL) != 0)
			return 2;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	fill(4);
	printf("%c%c%c%c\n", bufs[0][0], bufs[1][0], bufs[2][0], bufs[3][0]);
	return 0;
}

/* ------------------------------------------------------------------------
 * hang: a job dropped by a failed allocation is still waited for
 * ---------------------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int pending;

static void *job(void *arg)
{
	free(arg);
	pthread_mutex_lock(&lock);
	if (--pending == 0)
		pthread_cond_signal(&done);
	pthread_mutex_unlock(&lock);
	return NULL;
}

#define SUBMIT_FN(n)                                                                             \
	static NOINLINE void submit_##n(pthread_t *t)                                          \
	{                                                                                        \
		char *arg = malloc(16 + n);                                                      \
		if (!arg)                                                                        \
			return; /* the bug: still counted in pending */                         \
		pthread_create(t, NULL, job, arg);                                               \
	}
SUBMIT_FN(0)
SUBMIT_FN(1)
SUBMIT_FN(2)

static NOINLINE void wait_jobs(void)
{
	pthread_mutex_lock(&lock);
	while (pending)
		pthread_cond_wait(&done, &lock);
	pthread_mutex_unlock(&lock);
}

static int hang(void)
{
	pthread_t t[3] = {0};
	pending = 3;
	submit_0(&t[0]);
	submit_1(&t[1]);
	submit_2(&t[2]);
	wait_jobs();
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("3 jobs\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "paths") == 0)
		return paths();
	if (strcmp(mode, "wrapper") == 0)
		return wrapper();
	if (strcmp(mode, "libc") == 0)
		return libc_crashes();
	if (strcmp(mode, "message") == 0)
		return records(false);
	if (strcmp(mode, "hostile") == 0)
		return records(true);
	if (strcmp(mode, "silent") == 0)
		return silent();
	if (strcmp(mode, "threads") == 0)
		return threads();
	if (strcmp(mode, "hang") == 0)
		return hang();
	fprintf(stderr, "usage: findprog paths|wrapper|libc|message|silent|threads|hang|hostile\n");
	return 2;
}
