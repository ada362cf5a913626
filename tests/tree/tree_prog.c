/*
 * tree_prog.c - the processes of a tree under one budget (limit.scope=tree):
 * members that hold memory, one that needs more than is left, a parent that
 * starts a child each way a process can (fork, exec, vfork, posix_spawn,
 * system), a forking server whose workers exit or are killed in the middle
 * of their allocations, and a member whose threads only free or exit.
 *
 *   tree_prog hold BYTES [ADJ]     oom_score_adj ADJ, BYTES in 256 KiB blocks,
 *                                  a "holding" line, then waits for a line or
 *                                  EOF on stdin and frees them
 *   tree_prog need BYTES           BYTES in 4 KiB blocks (small requests loop
 *                                  under pressure: the OOM step), "got", then
 *                                  waits on stdin
 *   tree_prog reserve BYTES        gfp_reserve(BYTES), a "reserved" line, then
 *                                  waits on stdin
 *   tree_prog holdc BYTES          hold BYTES, then closes every descriptor
 *                                  above 2 (closefrom) before its "holding"
 *                                  line (counted before the close)
 *   tree_prog holdx BYTES          puts /dev/null in the place of the
 *                                  shim's descriptor of the tree's file
 *                                  (dup2), then holds BYTES: "holding" with
 *                                  that descriptor and whether it is still
 *                                  /dev/null
 *   tree_prog forkx                puts a file of its own where the shim's
 *                                  descriptor of the tree's file was, forks
 *                                  a child that allocates (a member), and
 *                                  says whether any process holds a lock on
 *                                  that file: "forkx" with "locked"
 *   tree_prog holdfork BYTES       hold BYTES, and a forked child (a member
 *                                  holding nothing of its own) that waits on
 *                                  stdin too: "holding" with its pid
 *   tree_prog thold N BYTES        BYTES in 256 KiB blocks from N threads at
 *                                  once (each its share, until the first
 *                                  NULL), a "holding" line, then waits on
 *                                  stdin
 *   tree_prog tries                for each line N on stdin one malloc(N):
 *                                  "try" with ok true or false
 *   tree_prog threads              a member with threads: one that only frees
 *                                  (detached), one that allocates and exits;
 *                                  "threads" with its view and its own bytes
 *   tree_prog spawn HOW ARGS...    starts `tree_prog ARGS...` by HOW (fork,
 *                                  fork-exec, vfork-exec, posix_spawn,
 *                                  system): "spawn" with the tree's live bytes
 *                                  before, while the child holds, and after
 *   tree_prog reexec ARGS...       a member that execs `tree_prog ARGS...`
 *                                  itself (same pid)
 *   tree_prog server N             forks N workers that allocate: a quarter
 *                                  end by exit(), a quarter by _exit(), a
 *                                  quarter by a raw exit_group (no libc)
 *                                  once the server has counted them, a
 *                                  quarter are killed with SIGKILL while they
 *                                  allocate
 *   tree_prog usage                "usage" and exit
 *   tree_prog lockstop             (not a member) takes the lock of the tree
 *                                  GFP_TREE names, says "locked", and stops
 *                                  itself with SIGSTOP holding it
 *
 * Every line is one JSON object on stdout. Nothing is printed through stdio
 * (test_out.h), and the parents allocate nothing between the usages they
 * compare.
 */
#include <errno.h>
#include <fcntl.h>
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../je_allocated.h"
#include "../test_out.h"

#include "gfpshim.h"
#include "tree_structs.h"

extern char **environ;

static void die(const char *what)
{
	test_out(2, "tree_prog: %s: %s\n", what, strerror(errno));
	_exit(2);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static long je_own(void)
{
	long n = je_allocated();
	if (n < 0)
		die("mallctl stats.allocated");
	return n;
}

static long usage_live(void)
{
	struct gfp_budget_usage u;
	if (gfp_budget_usage(&u) != 0 || u.limit == 0) {
		test_out(2, "tree_prog: no budget: run under the shim with limit=\n");
		_exit(2);
	}
	return u.live;
}

static long usage_limit(void)
{
	struct gfp_budget_usage u;
	gfp_budget_usage(&u);
	return u.limit;
}

/* A line from fd (or EOF): false at EOF with nothing read. */
static bool read_line(int fd, char *buf, size_t n)
{
	size_t len = 0;
	while (len + 1 < n) {
		ssize_t r = read(fd, buf + len, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (buf[len] == '\n')
			break;
		len++;
	}
	buf[len] = '\0';
	return len > 0;
}

static void wait_stdin(void)
{
	char buf[64];
	read_line(0, buf, sizeof(buf));
}

static void set_adj(int adj)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY);
	char s[16];
	int n = snprintf(s, sizeof(s), "%d", adj);
	if (fd < 0 || write(fd, s, (size_t)n) != n)
		die("cannot write /proc/self/oom_score_adj");
	close(fd);
}

#define MAXBLK 65536
static void *blk[MAXBLK];
static int nblk;

/* BYTES in blocks of `each`; the number allocated. */
static long fill(long bytes, size_t each)
{
	long got = 0;
	while (got < bytes && nblk < MAXBLK) {
		void *p = malloc(each);
		if (!p)
			break;
		memset(p, 1, each < 4096 ? each : 4096);
		blk[nblk++] = p;
		got += (long)each;
	}
	return got;
}

static void release(void)
{
	while (nblk)
		free(blk[--nblk]);
}

static int hold(long bytes, int argc, char **argv)
{
	if (argc > 0)
		set_adj(atoi(argv[0]));
	long got = fill(bytes, 256 * 1024);
	test_out(1,
	         "{\"event\":\"holding\",\"pid\":%d,\"bytes\":%ld,\"tree_live\":%ld,\"limit\":%ld,"
	         "\"own\":%ld}\n",
	         (int)getpid(), got, usage_live(), usage_limit(), je_own());
	wait_stdin();
	release();
	return 0;
}

/* A member that closes the descriptors it did not open (the shim's
 * among them), as daemons and sandboxes do, once it holds its bytes. */
static int holdc(long bytes)
{
	long got = fill(bytes, 256 * 1024);
	long live = usage_live(), limit = usage_limit(), own = je_own();
	if (close_range(3, ~0U, 0) != 0)
		die("close_range");
	test_out(1,
	         "{\"event\":\"holding\",\"pid\":%d,\"bytes\":%ld,\"tree_live\":%ld,\"limit\":%ld,"
	         "\"own\":%ld}\n",
	         (int)getpid(), got, live, limit, own);
	wait_stdin();
	release();
	return 0;
}

/* The descriptor of the process that is the file GFP_TREE names; -1. */
static int tree_fd(void)
{
	struct stat want, st;
	const char *path = getenv("GFP_TREE");
	if (!path || stat(path, &want) != 0)
		return -1;
	for (int fd = 3; fd < 65536; fd++)
		if (fstat(fd, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino)
			return fd;
	return -1;
}

/* A member that puts a file of its own where the shim's descriptor was, as
 * a program that dup2s onto descriptors it did not open would. */
static int holdx(long bytes)
{
	int fd = tree_fd(), null = open("/dev/null", O_RDONLY);
	struct stat want, st;
	if (fd < 0 || null < 0 || fstat(null, &want) != 0 || dup2(null, fd) != fd)
		die("no descriptor of the tree's file to replace");
	close(null);
	long got = fill(bytes, 256 * 1024);
	long live = usage_live(), limit = usage_limit();
	bool still = fstat(fd, &st) == 0 && st.st_rdev == want.st_rdev && S_ISCHR(st.st_mode);
	test_out(1,
	         "{\"event\":\"holding\",\"pid\":%d,\"bytes\":%ld,\"tree_live\":%ld,\"limit\":%ld,"
	         "\"fd\":%d,\"still_null\":%s}\n",
	         (int)getpid(), got, live, limit, fd, still ? "true" : "false");
	wait_stdin();
	release();
	return 0;
}

/* A member whose descriptor of the tree's file became one of its own
 * files (closefrom, then an open that got the number), and that forks. */
static int forkx(void)
{
	int fd = tree_fd();
	char path[] = "/tmp/tree_prog.XXXXXX";
	int own = mkstemp(path);
	if (fd < 0 || own < 0 || dup2(own, fd) != fd)
		die("no descriptor of the tree's file to replace");
	unlink(path);
	close(own);
	int joined[2], done[2];
	if (pipe(joined) != 0 || pipe(done) != 0)
		die("pipe");
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		close(done[1]);
		void *p = malloc(1 << 20);
		if (p)
			memset(p, 1, 4096);
		usage_live();
		char c = 'j';
		if (write(joined[1], &c, 1) != 1 || read(done[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(done[0]);
	char c;
	if (read(joined[0], &c, 1) != 1)
		die("the child did not join");
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	if (fcntl(fd, F_GETLK, &fl) != 0)
		die("F_GETLK");
	test_out(1, "{\"event\":\"forkx\",\"pid\":%d,\"fd\":%d,\"locked\":%s}\n", (int)getpid(), fd,
	         fl.l_type != F_UNLCK ? "true" : "false");
	close(done[1]);
	waitpid(child, NULL, 0);
	return 0;
}

/* A member with a child that outlives it when it is killed. */
static int holdfork(long bytes)
{
	long got = fill(bytes, 256 * 1024);
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		wait_stdin();
		_exit(0);
	}
	test_out(1,
	         "{\"event\":\"holding\",\"pid\":%d,\"child\":%d,\"bytes\":%ld,\"tree_live\":%ld,"
	         "\"limit\":%ld}\n",
	         (int)getpid(), (int)child, got, usage_live(), usage_limit());
	wait_stdin();
	release();
	waitpid(child, NULL, 0);
	return 0;
}

/* ------------------------------------------------------------------------
 * A member whose threads allocate at once
 * ---------------------------------------------------------------------- */

#define TMAX 8
static void *tblk[TMAX][1024];
static int tcount[TMAX];
static long tgot[TMAX], tshare;

static void *thold_thread(void *arg)
{
	int k = (int)(long)arg;
	while (tgot[k] < tshare && tcount[k] < 1024) {
		void *p = malloc(256 * 1024);
		if (!p)
			break;
		memset(p, 1, 4096);
		tblk[k][tcount[k]++] = p;
		tgot[k] += 256 * 1024;
	}
	return NULL;
}

static int thold(int n, long bytes)
{
	if (n < 1 || n > TMAX)
		n = TMAX;
	tshare = bytes / n;
	pthread_t t[TMAX];
	for (int k = 0; k < n; k++)
		if (pthread_create(&t[k], NULL, thold_thread, (void *)(long)k) != 0)
			die("pthread_create");
	long got = 0;
	for (int k = 0; k < n; k++) {
		pthread_join(t[k], NULL);
		got += tgot[k];
	}
	test_out(1,
	         "{\"event\":\"holding\",\"pid\":%d,\"threads\":%d,\"bytes\":%ld,\"tree_live\":%ld,"
	         "\"limit\":%ld,\"own\":%ld}\n",
	         (int)getpid(), n, got, usage_live(), usage_limit(), je_own());
	wait_stdin();
	for (int k = 0; k < n; k++)
		while (tcount[k])
			free(tblk[k][--tcount[k]]);
	return 0;
}

static int need(long bytes)
{
	long got = fill(bytes, 4096);
	test_out(1, "{\"event\":\"got\",\"pid\":%d,\"bytes\":%ld,\"tree_live\":%ld}\n",
	         (int)getpid(), got, usage_live());
	wait_stdin();
	release();
	return 0;
}

static int reserve(long bytes)
{
	int rc = gfp_reserve((size_t)bytes, GFP_KERNEL);
	struct gfp_budget_usage u;
	gfp_budget_usage(&u);
	test_out(1, "{\"event\":\"reserved\",\"pid\":%d,\"rc\":%d,\"reserved\":%ld}\n",
	         (int)getpid(), rc, u.reserved);
	wait_stdin();
	gfp_unreserve();
	return 0;
}

static int tries(void)
{
	char line[64];
	while (read_line(0, line, sizeof(line))) {
		long n = atol(line);
		void *p = malloc((size_t)n);
		if (p) {
			memset(p, 1, 4096);
			blk[nblk++] = p;
		}
		struct gfp_budget_usage u;
		gfp_budget_usage(&u);
		test_out(1,
		         "{\"event\":\"try\",\"pid\":%d,\"bytes\":%ld,\"ok\":%s,\"tree_live\":%ld,"
		         "\"limit\":%ld,\"reserved\":%ld}\n",
		         (int)getpid(), n, p ? "true" : "false", u.live, u.limit, u.reserved);
	}
	release();
	return 0;
}

/* ------------------------------------------------------------------------
 * A member with threads
 * ---------------------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int go, freed;

/* Only frees: half the main thread's blocks, then flushes its cache and
 * ends (detached). */
static void *freer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	for (int i = 0; i < nblk; i += 2) {
		free(blk[i]);
		blk[i] = NULL;
	}
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	freed = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *leftover[32];

/* Allocates 2 MiB and exits: its bytes stay the process's. */
static void *exiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < 32; i++)
		leftover[i] = malloc(64 * 1024);
	return NULL;
}

static int threads(void)
{
	fill(4 << 20, 64 * 1024);
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, freer, NULL) != 0)
		die("pthread_create");
	pthread_t e;
	if (pthread_create(&e, NULL, exiter, NULL) != 0 || pthread_join(e, NULL) != 0)
		die("pthread_create");
	pthread_mutex_lock(&lock);
	go = 1;
	pthread_cond_broadcast(&cond);
	while (!freed)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	sleep_ms(50); /* the detached thread's exit */
	long own = je_own();
	test_out(1, "{\"event\":\"threads\",\"pid\":%d,\"tree_live\":%ld,\"own\":%ld}\n",
	         (int)getpid(), usage_live(), own);
	wait_stdin();
	for (int i = 0; i < 32; i++)
		free(leftover[i]);
	return 0;
}

/* ------------------------------------------------------------------------
 * A child started each way
 * ---------------------------------------------------------------------- */

static int run(int argc, char **argv);
static const char *self;

struct sys_arg {
	char cmd[1024];
	int rc;
	int running; /* the thread runs: what starting it allocated is settled */
	int started; /* 0 until the parent lets it go */
};

static void *system_thread(void *p)
{
	struct sys_arg *a = p;
	pthread_mutex_lock(&lock);
	a->running = 1;
	pthread_cond_broadcast(&cond);
	while (!a->started)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	a->rc = system(a->cmd);
	return NULL;
}

static int spawn(const char *how, int argc, char **argv)
{
	int down[2], up[2];
	if (pipe(down) != 0 || pipe(up) != 0)
		die("pipe");
	char *cargv[16] = {(char *)self};
	for (int i = 0; i < argc && i < 14; i++)
		cargv[i + 1] = argv[i];
	/* Everything the parent allocates to start the child, before the
	 * first usage: the counts compared are the child's alone. */
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, down[0], 0);
	posix_spawn_file_actions_adddup2(&fa, up[1], 1);
	static struct sys_arg sa;
	pthread_t st;
	if (strcmp(how, "system") == 0) {
		int n = snprintf(sa.cmd, sizeof(sa.cmd), "'%s'", self);
		for (int i = 0; i < argc; i++)
			n += snprintf(sa.cmd + n, sizeof(sa.cmd) - (size_t)n, " '%s'", argv[i]);
		snprintf(sa.cmd + n, sizeof(sa.cmd) - (size_t)n, " <&%d >&%d", down[0], up[1]);
		if (pthread_create(&st, NULL, system_thread, &sa) != 0)
			die("pthread_create");
		pthread_mutex_lock(&lock);
		while (!sa.running)
			pthread_cond_wait(&cond, &lock);
		pthread_mutex_unlock(&lock);
	}
	long before = usage_live();
	pid_t pid = -1;
	bool execs = strcmp(how, "fork-exec") == 0 || strcmp(how, "vfork-exec") == 0;
	if (execs || strcmp(how, "fork") == 0) {
		pid = how[0] == 'v' ? vfork() : fork();
		if (pid == 0) {
			dup2(down[0], 0);
			dup2(up[1], 1);
			if (!execs)
				exit(run(argc, argv)); /* exit(): the member leaves as it ends */
			execv(self, cargv);
			_exit(127);
		}
	} else if (strcmp(how, "posix_spawn") == 0) {
		errno = posix_spawn(&pid, self, &fa, NULL, cargv, environ);
		if (errno)
			die("posix_spawn");
	} else if (strcmp(how, "system") == 0) {
		pthread_mutex_lock(&lock);
		sa.started = 1;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
	} else {
		test_out(2, "tree_prog: spawn: unknown way '%s'\n", how);
		return 2;
	}
	if (pid < 0 && strcmp(how, "system") != 0)
		die(how);
	bool by_system = strcmp(how, "system") == 0;
	if (!by_system) { /* system's shell inherits them when it starts */
		close(down[0]);
		close(up[1]);
	}
	char line[1024];
	if (!read_line(up[0], line, sizeof(line))) {
		test_out(2, "tree_prog: spawn %s: the child said nothing\n", how);
		return 1;
	}
	long during = usage_live();
	if (by_system) {
		close(down[0]);
		close(up[1]);
	}
	test_out(1, "%s\n", line); /* the child's own line */
	if (write(down[1], "\n", 1) != 1)
		die("write");
	close(down[1]);
	int status = 0;
	if (strcmp(how, "system") == 0) {
		pthread_join(st, NULL);
		status = sa.rc;
	} else if (waitpid(pid, &status, 0) != pid) {
		die("waitpid");
	}
	long after = usage_live();
	test_out(1,
	         "{\"event\":\"spawn\",\"how\":\"%s\",\"status\":%d,\"before\":%ld,\"during\":%ld,"
	         "\"after\":%ld}\n",
	         how, status, before, during, after);
	return 0;
}

/* ------------------------------------------------------------------------
 * A forking server
 * ---------------------------------------------------------------------- */

static bool is_zombie(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return true;
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return true;
	buf[r] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

/* Worker kinds: 0 ends by exit(), 1 by _exit(), 2 allocates until killed,
 * 3 ends by the exit_group system call itself. The ones that end do so at
 * EOF on `go`, once the server has counted what they hold. */
#define WORKER_BLOCKS 16
static void worker(int kind, int out, int go)
{
	int blocks = kind == 2 ? 4096 : WORKER_BLOCKS;
	for (int i = 0; i < blocks; i++) {
		void *p = malloc(kind == 2 ? 256 * 1024 : 1024 * 1024);
		if (p)
			memset(p, 1, 4096);
		if (write(out, "x", 1) != 1)
			_exit(3);
		sleep_ms(kind == 2 ? 5 : 1);
	}
	char c;
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	if (kind == 0)
		exit(0);
	if (kind == 3)
		syscall(SYS_exit_group, 0);
	_exit(0);
}

static int server(int n)
{
	fill(4 << 20, 256 * 1024);
	pid_t pid[64];
	int prog[64];
	if (n > 64)
		n = 64;
	int go[2];
	if (pipe(go) != 0)
		die("pipe");
	long before = usage_live();
	for (int i = 0; i < n; i++) {
		int p[2];
		if (pipe(p) != 0)
			die("pipe");
		pid[i] = fork();
		if (pid[i] < 0)
			die("fork");
		if (pid[i] == 0) {
			close(p[0]);
			close(go[1]);
			worker(i % 4, p[1], go[0]);
		}
		close(p[1]);
		prog[i] = p[0];
	}
	close(go[0]);
	/* Every worker that ends done with its blocks (and waiting on `go`),
	 * every other one well into its allocations, however long the machine
	 * takes to run them. */
	for (int i = 0; i < n; i++) {
		char c;
		for (int k = 0; k < (i % 4 == 2 ? 3 : WORKER_BLOCKS); k++)
			if (read(prog[i], &c, 1) != 1)
				break;
	}
	long during = usage_live();
	close(go[1]);
	int killed = 0, exited = 0, signalled = 0;
	for (int i = 0; i < n; i++)
		if (i % 4 == 2 && kill(pid[i], SIGKILL) == 0)
			killed++;
	/* The workers that end by themselves are reaped; the killed ones stay
	 * zombies for a while: their memory is back with the kernel. */
	for (int i = 0; i < n; i++) {
		int st;
		if (i % 4 == 2)
			continue;
		if (waitpid(pid[i], &st, 0) != pid[i])
			die("waitpid");
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			exited++;
	}
	for (int i = 2; i < n; i += 4)
		while (!is_zombie(pid[i]))
			sleep_ms(1);
	long zombies = usage_live();
	for (int i = 0; i < n; i++) {
		int st;
		if (i % 4 != 2)
			continue;
		if (waitpid(pid[i], &st, 0) != pid[i])
			die("waitpid");
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			signalled++;
	}
	for (int i = 0; i < n; i++)
		close(prog[i]);
	long after = usage_live();
	test_out(
	    1,
	    "{\"event\":\"server\",\"workers\":%d,\"killed\":%d,\"exited\":%d,\"signalled\":%d,"
	    "\"before\":%ld,\"during\":%ld,\"zombies\":%ld,\"after\":%ld}\n",
	    n, killed, exited, signalled, before, during, zombies, after);
	return 0;
}

/* A process stopped while it holds the tree's lock (as a member stopped
 * by ^Z in the middle of a decision would be). */
static int lockstop(void)
{
	const char *path = getenv("GFP_TREE");
	int fd = path ? open(path, O_RDWR) : -1;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		die("GFP_TREE");
	struct tree_seg *seg =
	    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (seg == MAP_FAILED)
		die("mmap");
	int r = pthread_mutex_lock(&seg->lock);
	if (r != 0 && r != EOWNERDEAD) {
		errno = r;
		die("pthread_mutex_lock");
	}
	test_out(1, "{\"event\":\"locked\",\"pid\":%d}\n", (int)getpid());
	raise(SIGSTOP);
	pthread_mutex_unlock(&seg->lock);
	return 0;
}

static int run(int argc, char **argv)
{
	if (argc < 1)
		goto usage;
	const char *cmd = argv[0];
	if (strcmp(cmd, "hold") == 0 && argc >= 2)
		return hold(atol(argv[1]), argc - 2, argv + 2);
	if (strcmp(cmd, "holdc") == 0 && argc == 2)
		return holdc(atol(argv[1]));
	if (strcmp(cmd, "holdx") == 0 && argc == 2)
		return holdx(atol(argv[1]));
	if (strcmp(cmd, "forkx") == 0)
		return forkx();
	if (strcmp(cmd, "holdfork") == 0 && argc == 2)
		return holdfork(atol(argv[1]));
	if (strcmp(cmd, "thold") == 0 && argc == 3)
		return thold(atoi(argv[1]), atol(argv[2]));
	if (strcmp(cmd, "need") == 0 && argc == 2)
		return need(atol(argv[1]));
	if (strcmp(cmd, "tries") == 0)
		return tries();
	if (strcmp(cmd, "reserve") == 0 && argc == 2)
		return reserve(atol(argv[1]));
	if (strcmp(cmd, "threads") == 0)
		return threads();
	if (strcmp(cmd, "spawn") == 0 && argc >= 3)
		return spawn(argv[1], argc - 2, argv + 2);
	if (strcmp(cmd, "server") == 0 && argc == 2)
		return server(atoi(argv[1]));
	if (strcmp(cmd, "lockstop") == 0)
		return lockstop();
	if (strcmp(cmd, "reexec") == 0 && argc >= 2) {
		fill(256 * 1024, 64 * 1024); /* a heap the exec takes away */
		usage_live();                /* ... and that the tree has counted */
		char *cargv[16] = {(char *)self};
		for (int i = 1; i < argc && i < 15; i++)
			cargv[i] = argv[i];
		execv(self, cargv);
		die("execv");
	}
	if (strcmp(cmd, "usage") == 0) {
		test_out(1, "{\"event\":\"usage\",\"pid\":%d,\"tree_live\":%ld,\"limit\":%ld}\n",
		         (int)getpid(), usage_live(), usage_limit());
		return 0;
	}
usage:
	test_out(2, "usage: tree_prog "
	            "hold|holdc|holdx|forkx|holdfork|thold|need|reserve|tries|threads|spawn|server|"
	            "usage ...\n");
	return 2;
}

int main(int argc, char **argv)
{
	self = "/proc/self/exe";
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n > 0) {
		path[n] = '\0';
		self = path;
	}
	return run(argc - 1, argv + 1);
}
