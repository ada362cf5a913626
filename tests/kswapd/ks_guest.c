/*
 * ks_guest - what the background reclaim thread (kswapd=1) is to a program:
 * a guest. The program keeps a cache that a shrinker frees and fills it
 * past the budget until the thread appears (named gfp-kswapd in
 * /proc/self/task), then looks at it.
 *
 *   ks_guest guest BYTES  fill BYTES of cache; SIGUSR1 sent to the process 20
 *                         times is handled by program threads only; the
 *                         thread blocks the usual signals; once the program
 *                         freed its whole cache the budget counts ~0 live
 *                         bytes (what the thread freed counted too)
 *   ks_guest fork BYTES   fill, fork: the child has no such thread until
 *                         it fills its own cache past the watermark
 *   ks_guest psi          allocate a little, wait for the thread (made at
 *                         once under kswapd.psi=1), then half a second
 *
 * One JSON line on stdout (the child of fork prints its own first).
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gfpshim.h>

#define BLOCK 4096

struct block {
	struct block *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block *cache;
static size_t cached;
static pthread_t main_thread;
static uint64_t freed_by_main, freed_elsewhere; /* atomic */

static size_t scan(void *arg, size_t want, gfp_t ctx)
{
	(void)arg;
	(void)ctx;
	size_t freed = 0;
	pthread_mutex_lock(&lock);
	while (cache && freed < want) {
		struct block *b = cache;
		cache = b->next;
		free(b);
		freed += BLOCK;
	}
	cached -= freed;
	pthread_mutex_unlock(&lock);
	__atomic_add_fetch(pthread_equal(pthread_self(), main_thread) ? &freed_by_main
	                                                              : &freed_elsewhere,
	                   freed, __ATOMIC_RELAXED);
	return freed;
}

static void fill(size_t bytes)
{
	for (size_t n = 0; n < bytes; n += BLOCK) {
		struct block *b = malloc(BLOCK);
		if (!b) {
			fprintf(stderr, "ks_guest: malloc failed\n");
			exit(3);
		}
		memset(b, 1, BLOCK);
		pthread_mutex_lock(&lock);
		b->next = cache;
		cache = b;
		cached += BLOCK;
		pthread_mutex_unlock(&lock);
	}
}

static void drop_all(void)
{
	pthread_mutex_lock(&lock);
	while (cache) {
		struct block *b = cache;
		cache = b->next;
		free(b);
	}
	cached = 0;
	pthread_mutex_unlock(&lock);
}

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* The tid of the thread named gfp-kswapd, 0 when there is none. */
static int kswapd_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int tid = 0;
	while (d && (e = readdir(d)) && !tid) {
		char path[300], comm[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && strcmp(comm, "gfp-kswapd\n") == 0)
			tid = atoi(e->d_name);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return tid;
}

/* Waits for it (a generous minute: a loaded machine is slow to run it). */
static int wait_kswapd(void)
{
	for (int i = 0; i < 6000; i++) {
		int tid = kswapd_tid();
		if (tid)
			return tid;
		pause_ms(10);
	}
	return 0;
}

/* Whether thread tid blocks signal sig (SigBlk in its status). */
static int blocks(int tid, int sig)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	FILE *f = fopen(path, "r");
	unsigned long long mask = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &mask) == 1)
			break;
	if (f)
		fclose(f);
	return (int)((mask >> (sig - 1)) & 1);
}

static int handled[64], nhandled; /* atomic */

static void on_usr1(int sig)
{
	(void)sig;
	int i = __atomic_load_n(&nhandled, __ATOMIC_RELAXED);
	if (i < 64)
		handled[i] = (int)syscall(SYS_gettid);
	__atomic_store_n(&nhandled, i + 1, __ATOMIC_RELEASE);
}

static int guest(size_t bytes)
{
	signal(SIGUSR1, on_usr1);
	fill(bytes);
	int tid = wait_kswapd();
	int on_kswapd = 0;
	for (int i = 0; i < 20; i++) {
		kill(getpid(), SIGUSR1);
		for (int w = 0; w < 60000 && __atomic_load_n(&nhandled, __ATOMIC_ACQUIRE) <= i; w++)
			pause_ms(1);
	}
	/* The fill left live bytes above the high watermark: the thread,
	 * woken, calls the shrinker once it runs. */
	for (int w = 0; w < 60000 && !__atomic_load_n(&freed_elsewhere, __ATOMIC_RELAXED); w++)
		pause_ms(1);
	for (int i = 0; i < nhandled && i < 64; i++)
		on_kswapd += handled[i] == tid;
	drop_all();
	struct gfp_budget_usage u;
	gfp_budget_usage(&u);
	printf("{\"kswapd_tid\":%d,\"blocks\":{\"USR1\":%d,\"TERM\":%d,\"INT\":%d,\"CHLD\":%d},"
	       "\"handled\":%d,\"handled_on_kswapd\":%d,\"freed_by_main\":%llu,"
	       "\"freed_elsewhere\":%llu,\"live_after_drop\":%ld,\"reserved\":%ld}\n",
	       tid, tid ? blocks(tid, SIGUSR1) : 0, tid ? blocks(tid, SIGTERM) : 0,
	       tid ? blocks(tid, SIGINT) : 0, tid ? blocks(tid, SIGCHLD) : 0, nhandled, on_kswapd,
	       (unsigned long long)freed_by_main, (unsigned long long)freed_elsewhere, u.live,
	       u.reserved);
	return 0;
}

static int forked(size_t bytes)
{
	fill(bytes);
	int parent_tid = wait_kswapd();
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		main_thread = pthread_self();
		int before = kswapd_tid();
		fill(bytes);
		int after = wait_kswapd();
		printf("{\"who\":\"child\",\"kswapd_before\":%d,\"kswapd_after\":%d}\n", before,
		       after);
		exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	printf("{\"who\":\"parent\",\"kswapd\":%d,\"child_status\":%d}\n", parent_tid, status);
	return 0;
}

int main(int argc, char **argv)
{
	main_thread = pthread_self();
	if (gfp_shrinker_register(scan, NULL, GFP_SHRINK_NONE) != 0) {
		fprintf(stderr, "ks_guest: gfp_shrinker_register failed\n");
		return 2;
	}
	if (argc == 3 && strcmp(argv[1], "guest") == 0)
		return guest(strtoull(argv[2], NULL, 0));
	if (argc == 3 && strcmp(argv[1], "fork") == 0)
		return forked(strtoull(argv[2], NULL, 0));
	if (argc == 2 && strcmp(argv[1], "psi") == 0) {
		fill(1 << 20);
		int tid = wait_kswapd();
		pause_ms(500);
		printf("{\"kswapd_tid\":%d}\n", tid);
		return 0;
	}
	fprintf(stderr, "usage: ks_guest guest BYTES | fork BYTES | psi\n");
	return 2;
}
