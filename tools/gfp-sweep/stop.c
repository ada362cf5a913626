/*
 * stop.c - stopping the sweep: the first stop signal (Ctrl-C, SIGTERM,
 * SIGHUP) kills the runs in flight, hung ones included, with everything
 * they started (their keepers do: keeper.c), and lets the sweep report the
 * runs that finished; a second one ends it at once, without a report. The
 * runs in flight are tracked here, by their keepers' pids, so that the
 * handler knows them.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweep.h"

/* The runs in flight, by their keepers' pids (keeper.c): a signal that
 * stops the sweep (Ctrl-C, SIGTERM) stops them too, hung ones included,
 * with everything they started. */
static pid_t *running;
static size_t nrunning;

void stop_init(size_t n)
{
	nrunning = n;
	running = calloc(nrunning, sizeof(*running));
	if (!running)
		die(EXIT_USAGE, "out of memory");
}
static volatile sig_atomic_t stop_signal;

void stop_track(pid_t pid, pid_t replace)
{
	for (size_t i = 0; i < nrunning; i++)
		if (running[i] == replace) {
			running[i] = pid;
			return;
		}
}

/* The sweep's files, from a signal handler: only calls that are safe there
 * (no nftw, which allocates). The directory is flat. */
static void remove_tmp_now(void)
{
	int fd = open(opt.tmp, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return;
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n;
	while ((n = getdents64(fd, buf, sizeof(buf))) > 0)
		for (ssize_t pos = 0; pos < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + pos);
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(fd, e->d_name, 0);
			pos += e->d_reclen;
		}
	close(fd);
	rmdir(opt.tmp);
}

/* From a signal handler: the keepers of the runs in flight, told to end,
 * reaped once they have (within a second: each kills its run at once). */
static void reap_keepers_now(void)
{
	double t0 = sweep_now();
	const struct timespec pause = {0, 1000000};
	for (;;) {
		bool left = false;
		for (size_t i = 0; i < nrunning; i++)
			if (running[i] > 0 && waitpid(running[i], NULL, WNOHANG) == 0)
				left = true;
			else
				running[i] = 0;
		if (!left || sweep_now() - t0 > 1)
			return;
		nanosleep(&pause, NULL);
	}
}

/* The first stop signal kills the runs in flight and lets the sweep report
 * the runs that finished (execute.c, run_wait); a second one, a second or more
 * later, ends it at once, without a report. Sooner it is the same stop:
 * timeout(1) signals the sweep, then its process group. */
static void on_stop(int sig)
{
	static double first;
	bool again = stop_signal != 0;
	if (again && sweep_now() - first < 1)
		return;
	if (!again)
		first = sweep_now();
	stop_signal = sig;
	for (size_t i = 0; i < nrunning; i++)
		if (running[i] > 0)
			kill(running[i], SIGTERM);
	if (!again)
		return;
	reap_keepers_now();
	static const char msg[] =
	    "gfp-sweep: error: stopped at once by a second signal: no report\n";
	ssize_t w = progress_on_line() ? write(2, "\r\033[K", 4) : 0;
	w = write(2, msg, sizeof(msg) - 1);
	(void)w;
	remove_tmp_now();
	outfile_remove_now();
	_exit(128 + sig);
}

int stop_requested(void)
{
	return stop_signal;
}

/* The signals that stop the sweep. */
static void stop_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* Held while a run is forked and tracked, or reaped and forgotten: on_stop
 * must neither miss a run nor kill a pid that is no longer ours. */
void stop_hold(sigset_t *old)
{
	sigset_t set;
	stop_set(&set);
	sigprocmask(SIG_BLOCK, &set, old);
}

void stop_release(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* waitpid, and the run forgotten once reaped. */
pid_t stop_reap(pid_t pid, int *st, int flags)
{
	sigset_t old;
	stop_hold(&old);
	pid_t r = waitpid(pid, st, flags);
	if (r == pid)
		stop_track(0, pid);
	stop_release(&old);
	return r;
}

void stop_on_signals(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_stop;
	stop_set(&sa.sa_mask); /* one on_stop at a time */
	/* A stop the sweep goes on from (the first, or the same one again)
	 * must not fail the report being written with EINTR. */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}
