/*
 * keeper.c - a run and everything it starts end together (gfp-sweep).
 *
 * A run's program may leave processes behind: children it never waits for,
 * daemons (fork, setsid, fork) that leave its process group and session.
 * Killing the run's process group misses the daemons, and a process group
 * cannot be followed once they are reparented to init. So each run has a
 * keeper between gfp-sweep and the program: a child subreaper
 * (PR_SET_CHILD_SUBREAPER), to which every orphan of the run is reparented
 * instead of init. When the program ends, or the keeper is told to stop (a
 * hang, the sweep stopped or gone), it kills its children and their process
 * groups until it has none left, and only then ends: when gfp-sweep has
 * reaped the keeper, nothing of the run is alive.
 *
 * The keeper waits with sigwaitinfo (SIGCHLD and the stop signals blocked),
 * so a stop cannot fall between a check and the wait. It never returns to
 * gfp-sweep's code and never calls exit(): the sweep's stdio buffers are
 * not its own.
 */
#include "keeper.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEEPER_KILL_S 10 /* processes that SIGKILL does not end by then are left */

/* The keeper's children, at most max of them: /proc's children list, else
 * every process's parent from /proc/N/stat (a kernel without
 * CONFIG_PROC_CHILDREN). -1 when neither can be read. */
static int children(pid_t *out, int max)
{
	char path[64];
	pid_t self = getpid();
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)self);
	FILE *f = fopen(path, "r");
	int n = 0;
	if (f) {
		long p;
		while (n < max && fscanf(f, "%ld", &p) == 1)
			out[n++] = (pid_t)p;
		fclose(f);
		return n;
	}
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	struct dirent *e;
	while (n < max && (e = readdir(d))) {
		char *end;
		long p = strtol(e->d_name, &end, 10);
		if (*end || p <= 0)
			continue;
		char stat[512];
		snprintf(path, sizeof(path), "/proc/%ld/stat", p);
		FILE *s = fopen(path, "r");
		if (!s)
			continue;
		size_t len = fread(stat, 1, sizeof(stat) - 1, s);
		fclose(s);
		stat[len] = '\0';
		/* pid (comm) state ppid: comm may hold spaces and ')'. */
		char *close = strrchr(stat, ')');
		int ppid;
		if (close && sscanf(close + 1, " %*c %d", &ppid) == 1 && ppid == self)
			out[n++] = (pid_t)p;
	}
	closedir(d);
	return n;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Kills and reaps every child, and every orphan reparented meanwhile,
 * until there is none. A child leads a process group? The group goes too:
 * the pid of an unreaped child cannot name anyone else's group. */
static void kill_all(void)
{
	double t0 = now();
	for (;;) {
		pid_t kids[512];
		int n = children(kids, 512);
		for (int i = 0; i < n; i++) {
			kill(-kids[i], SIGKILL);
			kill(kids[i], SIGKILL);
		}
		bool reaped = false;
		pid_t w;
		while ((w = waitpid(-1, NULL, WNOHANG)) > 0)
			reaped = true;
		if (w < 0 && errno == ECHILD)
			return;
		if (now() - t0 > KEEPER_KILL_S)
			return; /* uninterruptible sleepers: left to init */
		if (!reaped)
			usleep(n < 0 ? 10000 : 1000);
	}
}

/* Ends the keeper as the run ended: its status, or its signal. */
static void end_as(int st) __attribute__((noreturn));
static void end_as(int st)
{
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);
		/* The program's crash, not the keeper's: no core of this. */
		prctl(PR_SET_DUMPABLE, 0);
		struct rlimit none = {0, 0};
		setrlimit(RLIMIT_CORE, &none);
		signal(sig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		kill(getpid(), sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 126);
}

void keeper_run(pid_t parent, const sigset_t *run_mask, void (*start)(void *), void *arg)
{
	sigset_t waitset;
	sigemptyset(&waitset);
	sigaddset(&waitset, SIGCHLD);
	sigaddset(&waitset, SIGTERM);
	sigaddset(&waitset, SIGINT);
	sigaddset(&waitset, SIGHUP);
	sigprocmask(SIG_BLOCK, &waitset, NULL);
	/* Blocked SIGCHLD stays pending only if it is not ignored outright
	 * (SIG_IGN would also reap the children unseen). */
	struct sigaction dfl = {.sa_handler = SIG_DFL}, chld;
	sigaction(SIGCHLD, &dfl, &chld);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	bool stop = getppid() != parent; /* the sweep died before prctl */

	pid_t prog = stop ? -1 : fork();
	if (prog == 0) {
		setpgid(0, 0);
		sigaction(SIGCHLD, &chld, NULL);
		sigprocmask(SIG_SETMASK, run_mask, NULL);
		start(arg);
		_exit(127);
	}
	int st = prog < 0 ? (126 << 8) : 0;
	while (!stop && prog > 0) {
		siginfo_t si;
		if (sigwaitinfo(&waitset, &si) < 0)
			continue;
		if (si.si_signo != SIGCHLD) {
			/* From the sweep, or its death (PR_SET_PDEATHSIG): a signal
			 * the program sends its parent is no reason to stop. */
			stop = si.si_pid == parent || getppid() != parent;
			if (stop)
				break;
			continue;
		}
		pid_t w;
		int s;
		bool done = false;
		while ((w = waitpid(-1, &s, WNOHANG)) > 0)
			if (w == prog) {
				st = s;
				done = true;
			}
		if (done)
			break;
	}
	kill_all();
	if (stop) /* as a run the sweep killed has always ended */
		kill(getpid(), SIGKILL);
	end_as(st);
}
