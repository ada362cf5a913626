/*
 * ctl_prog - a program the gfp-ctl tests change at run time (ctl=1).
 *
 *   ctl_prog server [-w N] [-s]
 *   ctl_prog waiter SIZE
 *   ctl_prog seq [-t N] [-w] CALLS
 *
 * server: prints "pid P", warms up (allocations of several sizes, stdio),
 * starts N idle worker threads (-w, default 2) and, with -s, a spinner
 * thread that allocates and frees 64 bytes all the time; then prints
 * "ready" and obeys one command per line on stdin, answering each with one
 * line on stdout (read(2) and write(2): nothing here allocates but the
 * counted calls):
 *
 *   epoch        starts a new epoch E (0 at start): "epoch E"
 *   run N        main and every worker make N calls malloc(64)+free each:
 *                "run E nulls=X calls=C main=X0 w0=X1 ..." (NULLs per thread)
 *   spin N       waits until the spinner made N more calls in this epoch:
 *                "spin E calls=C nulls=X" (the spinner's counts in epoch E)
 *   sum E        every NULL and call of epoch E so far: "sum E nulls=X calls=C"
 *   fork exit    fork; the child calls exit(0) (atexit handlers, destructors)
 *   fork _exit   fork; the child calls _exit(0)
 *                both answer "forked CHILD status S" after waitpid
 *   fork hold    fork; the child waits until `reap`, then calls exit(0):
 *                "forked CHILD"
 *   reap         lets the held child go: "reaped CHILD status S"
 *   hold N SIZE  main makes N calls malloc(SIZE) from one call site (hold's)
 *                and keeps the blocks: "hold N SIZE usable=U" (malloc's
 *                usable size of the first, by malloc_usable_size)
 *   release      frees what hold keeps: "released N"
 *   setuid U     setresgid(U) and setresuid(U) (every thread): "setuid U"
 *   quit (or end of input)  stops the threads, prints "bye", returns 0
 *
 * A thread reads the epoch before its call and counts a NULL in that epoch,
 * so a call counted in an epoch that began after a `gfp-ctl set` returned
 * was decided under the new policy. Workers wait on a condition variable
 * between commands: they are idle threads when gfp-ctl changes the policy.
 *
 * waiter: prints "pid P", fills the budget (limit=) with GFP_NOWAIT blocks
 * of 256K, 4K, 64 and 16 bytes until each size fails, prints "filled
 * bytes=B" and "waiting", makes one malloc(SIZE) (a small KERNEL request
 * loops), then prints "returned ok|null ms=M" (how long it took); after a
 * line (or the end) of input frees everything, prints "bye" and returns 0.
 *
 * seq: CALLS calls malloc(100) in main and, with -t N, in N threads (one
 * after the other); prints "main PATTERN" and "tI PATTERN", X a NULL and .
 * a block (the failure pattern of a seeded fail.probability). With -w it
 * first prints "pid P" and waits for a line on stdin (the test talks to the
 * listener meanwhile); neither allocates.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gfpshim.h>

#define MAX_WORKERS 8
#define MAX_EPOCHS  64

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	for (int off = 0; off < n;) {
		ssize_t w = write(1, line + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			exit(3);
		off += (int)w;
	}
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void pause_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------------------
 * server
 * ---------------------------------------------------------------------- */

static unsigned epoch;                                               /* atomic */
static unsigned long nulls[MAX_EPOCHS], calls[MAX_EPOCHS];           /* atomic, all threads */
static unsigned long spin_nulls[MAX_EPOCHS], spin_calls[MAX_EPOCHS]; /* atomic, the spinner */
static bool stop;                                                    /* atomic */

/* One call malloc(64)+free, counted in the epoch read before it (also as
 * the spinner's). */
static bool one_call(bool spinner)
{
	unsigned e = __atomic_load_n(&epoch, __ATOMIC_SEQ_CST);
	void *volatile p = malloc(64);
	bool null = p == NULL;
	if (null) {
		__atomic_add_fetch(&nulls[e], 1, __ATOMIC_SEQ_CST);
		if (spinner)
			__atomic_add_fetch(&spin_nulls[e], 1, __ATOMIC_SEQ_CST);
	} else {
		memset(p, 1, 64);
	}
	__atomic_add_fetch(&calls[e], 1, __ATOMIC_SEQ_CST);
	if (spinner)
		__atomic_add_fetch(&spin_calls[e], 1, __ATOMIC_SEQ_CST);
	free(p);
	return null;
}

static void *spinner(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < 50; i++)
			one_call(true);
		pause_us(200);
	}
	return NULL;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static unsigned long job_gen, job_calls;
static int jobs_left;
static unsigned long job_nulls[MAX_WORKERS + 1];

static unsigned long do_calls(unsigned long n)
{
	unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x += one_call(false);
	return x;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	unsigned long seen = 0;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (job_gen == seen && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			pthread_cond_wait(&cond, &lock);
		if (job_gen == seen)
			break;
		seen = job_gen;
		unsigned long n = job_calls;
		pthread_mutex_unlock(&lock);
		unsigned long x = do_calls(n);
		pthread_mutex_lock(&lock);
		job_nulls[id] = x;
		if (--jobs_left == 0)
			pthread_cond_broadcast(&cond);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void warm_up(void)
{
	/* Every size class the commands use, the stdio buffers, and jemalloc's
	 * thread cache of the main thread. */
	static void *keep[256];
	for (int r = 0; r < 4; r++) {
		for (int i = 0; i < 256; i++)
			keep[i] = malloc((size_t)(16 << (i % 8)));
		for (int i = 0; i < 256; i++)
			free(keep[i]);
	}
	char buf[64];
	snprintf(buf, sizeof(buf), "%d %f", 42, 1.5);
}

/* Reads one line of stdin into buf without stdio; false at end of input. */
/* hold's blocks: one call site, so that its row counts them alone. */
#define MAX_HELD 4096
static void *held[MAX_HELD];
static unsigned long nheld;

static __attribute__((noinline)) void hold(unsigned long n, size_t size)
{
	for (; n && nheld < MAX_HELD; n--)
		held[nheld++] = malloc(size);
}

static bool read_line(char *buf, size_t n)
{
	size_t len = 0;
	for (;;) {
		char c;
		ssize_t r = read(0, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return len > 0 ? (buf[len] = '\0', true) : false;
		if (c == '\n')
			break;
		if (len < n - 1)
			buf[len++] = c;
	}
	buf[len] = '\0';
	return true;
}

static int server(int argc, char **argv)
{
	int nworkers = 2;
	bool spin = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-w") && i + 1 < argc)
			nworkers = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-s"))
			spin = true;
		else
			return fprintf(stderr, "ctl_prog server: bad argument '%s'\n", argv[i]), 2;
	}
	if (nworkers < 0 || nworkers > MAX_WORKERS)
		return fprintf(stderr, "ctl_prog server: -w 0..%d\n", MAX_WORKERS), 2;
	say("pid %d", (int)getpid());
	warm_up();
	pthread_t w[MAX_WORKERS], s;
	for (int i = 0; i < nworkers; i++)
		if (pthread_create(&w[i], NULL, worker, (void *)(long)(i + 1)) != 0)
			return fprintf(stderr, "ctl_prog: pthread_create failed\n"), 1;
	if (spin && pthread_create(&s, NULL, spinner, NULL) != 0)
		return fprintf(stderr, "ctl_prog: pthread_create failed\n"), 1;
	/* One round of every thread before anyone changes the policy. */
	pthread_mutex_lock(&lock);
	job_calls = 100;
	jobs_left = nworkers;
	job_gen++;
	pthread_cond_broadcast(&cond);
	while (jobs_left)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	do_calls(100);
	say("ready");

	char cmd[128];
	pid_t held_child = 0;
	int held_fd = -1;
	while (read_line(cmd, sizeof(cmd))) {
		unsigned e = __atomic_load_n(&epoch, __ATOMIC_SEQ_CST);
		unsigned long n, size;
		if (!strcmp(cmd, "quit")) {
			break;
		} else if (!strcmp(cmd, "epoch")) {
			if (e + 1 >= MAX_EPOCHS)
				return say("error: too many epochs"), 1;
			__atomic_store_n(&epoch, e + 1, __ATOMIC_SEQ_CST);
			say("epoch %u", e + 1);
		} else if (sscanf(cmd, "run %lu", &n) == 1) {
			pthread_mutex_lock(&lock);
			job_calls = n;
			jobs_left = nworkers;
			job_gen++;
			pthread_cond_broadcast(&cond);
			pthread_mutex_unlock(&lock);
			job_nulls[0] = do_calls(n);
			pthread_mutex_lock(&lock);
			while (jobs_left)
				pthread_cond_wait(&cond, &lock);
			pthread_mutex_unlock(&lock);
			char line[400];
			unsigned long total = job_nulls[0];
			int len = snprintf(line, sizeof(line), " main=%lu", job_nulls[0]);
			for (int i = 1; i <= nworkers; i++) {
				total += job_nulls[i];
				len += snprintf(line + len, sizeof(line) - (size_t)len, " w%d=%lu",
				                i - 1, job_nulls[i]);
			}
			say("run %u nulls=%lu calls=%lu%s", e, total,
			    n * (unsigned long)(nworkers + 1), line);
		} else if (sscanf(cmd, "spin %lu", &n) == 1) {
			if (!spin)
				return say("error: no spinner (-s)"), 1;
			unsigned long want = __atomic_load_n(&spin_calls[e], __ATOMIC_SEQ_CST) + n;
			double t0 = now_ms();
			while (__atomic_load_n(&spin_calls[e], __ATOMIC_SEQ_CST) < want) {
				if (now_ms() - t0 > 10000)
					return say("error: the spinner made no progress in 10 s"),
					       1;
				pause_us(500);
			}
			say("spin %u calls=%lu nulls=%lu", e,
			    __atomic_load_n(&spin_calls[e], __ATOMIC_SEQ_CST),
			    __atomic_load_n(&spin_nulls[e], __ATOMIC_SEQ_CST));
		} else if (sscanf(cmd, "sum %lu", &n) == 1 && n < MAX_EPOCHS) {
			say("sum %lu nulls=%lu calls=%lu", n,
			    __atomic_load_n(&nulls[n], __ATOMIC_SEQ_CST),
			    __atomic_load_n(&calls[n], __ATOMIC_SEQ_CST));
		} else if (sscanf(cmd, "setuid %lu", &n) == 1) {
			if (setresgid((gid_t)n, (gid_t)n, (gid_t)n) != 0 ||
			    setresuid((uid_t)n, (uid_t)n, (uid_t)n) != 0)
				say("error: setresuid %lu: %s", n, strerror(errno));
			else
				say("setuid %d", (int)geteuid());
		} else if (!strcmp(cmd, "fork hold")) {
			int fds[2];
			if (held_child > 0 || pipe(fds) != 0)
				return say("error: fork hold"), 1;
			pid_t c = fork();
			if (c < 0)
				return say("error: fork: %s", strerror(errno)), 1;
			if (c == 0) {
				char b;
				close(fds[1]);
				while (read(fds[0], &b, 1) < 0 && errno == EINTR)
					;
				exit(0);
			}
			close(fds[0]);
			held_child = c;
			held_fd = fds[1];
			say("forked %d", (int)c);
		} else if (sscanf(cmd, "hold %lu %lu", &n, &size) == 2 && n &&
		           nheld + n <= MAX_HELD) {
			unsigned long first = nheld;
			hold(n, size);
			say("hold %lu %lu usable=%zu", n, size, malloc_usable_size(held[first]));
		} else if (!strcmp(cmd, "release")) {
			unsigned long freed = nheld;
			while (nheld)
				free(held[--nheld]);
			say("released %lu", freed);
		} else if (!strcmp(cmd, "reap")) {
			if (held_child <= 0)
				return say("error: no held child"), 1;
			close(held_fd);
			int st = 0;
			while (waitpid(held_child, &st, 0) < 0 && errno == EINTR)
				;
			say("reaped %d status %d", (int)held_child, st);
			held_child = 0;
		} else if (!strcmp(cmd, "fork exit") || !strcmp(cmd, "fork _exit")) {
			pid_t c = fork();
			if (c < 0)
				return say("error: fork: %s", strerror(errno)), 1;
			if (c == 0) {
				if (cmd[5] == 'e')
					exit(0);
				_exit(0);
			}
			int st = 0;
			while (waitpid(c, &st, 0) < 0 && errno == EINTR)
				;
			say("forked %d status %d", (int)c, st);
		} else {
			say("error: unknown command '%s'", cmd);
		}
	}
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	pthread_mutex_lock(&lock);
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < nworkers; i++)
		pthread_join(w[i], NULL);
	if (spin)
		pthread_join(s, NULL);
	say("bye");
	return 0;
}

/* ------------------------------------------------------------------------
 * waiter
 * ---------------------------------------------------------------------- */

struct block {
	struct block *next;
};

static int waiter(int argc, char **argv)
{
	if (argc != 1)
		return fprintf(stderr, "usage: ctl_prog waiter SIZE\n"), 2;
	size_t size = strtoul(argv[0], NULL, 0);
	say("pid %d", (int)getpid());
	static const size_t sizes[] = {256 << 10, 4 << 10, 64, 16};
	struct block *held = NULL;
	size_t bytes = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct block *b;
		while ((b = gfp_malloc(sizes[i], GFP_NOWAIT | GFP_NOWARN)) != NULL) {
			b->next = held;
			held = b;
			bytes += sizes[i];
		}
	}
	say("filled bytes=%zu", bytes);
	say("waiting");
	double t0 = now_ms();
	void *p = malloc(size);
	double ms = now_ms() - t0;
	say("returned %s ms=%.1f", p ? "ok" : "null", ms);
	char line[16];
	read_line(line, sizeof(line)); /* "quit" or the end of input */
	free(p);
	while (held) {
		struct block *next = held->next;
		free(held);
		held = next;
	}
	say("bye");
	return 0;
}

/* ------------------------------------------------------------------------
 * seq
 * ---------------------------------------------------------------------- */

static long seq_calls;
static char patterns[MAX_WORKERS + 1][4096];

static void pattern(char *out)
{
	for (long i = 0; i < seq_calls; i++) {
		void *volatile p = malloc(100);
		out[i] = p ? '.' : 'X';
		free(p);
	}
	out[seq_calls] = '\0';
}

static void *seq_thread(void *arg)
{
	pattern(arg);
	return NULL;
}

static int seq(int argc, char **argv)
{
	int threads = 0;
	bool hold = false;
	while (argc > 1) {
		if (!strcmp(argv[0], "-t")) {
			threads = atoi(argv[1]);
			argc -= 2;
			argv += 2;
		} else if (!strcmp(argv[0], "-w")) {
			hold = true;
			argc--;
			argv++;
		} else {
			break;
		}
	}
	if (argc != 1 || threads < 0 || threads > MAX_WORKERS)
		return fprintf(stderr, "usage: ctl_prog seq [-t N] [-w] CALLS\n"), 2;
	seq_calls = atol(argv[0]);
	if (seq_calls < 1 || seq_calls >= (long)sizeof(patterns[0]))
		return fprintf(stderr, "ctl_prog seq: CALLS 1..4095\n"), 2;
	if (hold) {
		char line[16];
		say("pid %d", (int)getpid());
		if (!read_line(line, sizeof(line)))
			return fprintf(stderr, "ctl_prog seq: no go line\n"), 1;
	}
	pattern(patterns[0]);
	for (int i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, seq_thread, patterns[i + 1]) != 0 ||
		    pthread_join(t, NULL) != 0)
			return fprintf(stderr, "ctl_prog: pthread_create failed\n"), 1;
	}
	say("main %s", patterns[0]);
	for (int i = 0; i < threads; i++)
		say("t%d %s", i, patterns[i + 1]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "server"))
		return server(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "waiter"))
		return waiter(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "seq"))
		return seq(argc - 2, argv + 2);
	fprintf(stderr,
	        "usage: ctl_prog server [-w N] [-s] | waiter SIZE | seq [-t N] [-w] CALLS\n");
	return 2;
}
