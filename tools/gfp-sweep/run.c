/*
 * run.c - running the program: a keeper per run, -j at a time, with a timeout,
 * and stopping them all on a signal. It owns the runs' processes and files;
 * what a run's end means is classify.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "keeper.h"
#include "text.h"
#include "sweep.h"

double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path) != 0 && errno != ENOENT;
}

/* The runs' files go with the sweep, however it ends (exit, die, a signal). */
void remove_tmp(void)
{
	if (opt.tmp[0] && nftw(opt.tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		tool_warning("could not remove %s", opt.tmp);
	opt.tmp[0] = '\0';
}

/* The runs in flight, by their keepers' pids (keeper.c): a signal that
 * stops the sweep (Ctrl-C, SIGTERM) stops them too, hung ones included,
 * with everything they started. */
static pid_t *running;
static size_t nrunning;

void run_track_init(size_t n)
{
	nrunning = n;
	running = calloc(nrunning, sizeof(*running));
	if (!running)
		die(EXIT_USAGE, "out of memory");
}
static volatile sig_atomic_t stop_signal;

static void track(pid_t pid, pid_t replace)
{
	for (size_t i = 0; i < nrunning; i++)
		if (running[i] == replace) {
			running[i] = pid;
			return;
		}
}

static void on_stop(int sig)
{
	stop_signal = sig;
	for (size_t i = 0; i < nrunning; i++)
		if (running[i] > 0)
			kill(running[i], SIGTERM);
}

/* Held while a run is forked and tracked, or reaped and forgotten: on_stop
 * must neither miss a run nor kill a pid that is no longer ours. */
static void stop_signals(int how, sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(how, how == SIG_SETMASK ? old : &set, how == SIG_SETMASK ? NULL : old);
}

/* waitpid, and the run forgotten once reaped. */
static pid_t reap(pid_t pid, int *st, int flags)
{
	sigset_t old;
	stop_signals(SIG_BLOCK, &old);
	pid_t r = waitpid(pid, st, flags);
	if (r == pid)
		track(0, pid);
	stop_signals(SIG_SETMASK, &old);
	return r;
}

void stop_on_signals(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Ends a run that is still going (a hang, or the sweep stopping): its
 * keeper kills it and all it started, then itself; SIGKILL to the keeper
 * only if it has not ended within 10 s. */
static void end_run(pid_t keeper, int *st)
{
	kill(keeper, SIGTERM);
	double t0 = now();
	while (reap(keeper, st, WNOHANG) == 0) {
		if (now() - t0 > 10) {
			kill(keeper, SIGKILL);
			reap(keeper, st, 0);
			return;
		}
		usleep(1000);
	}
}

/* Between polls: a stop signal ends the sweep, its files removed (atexit),
 * once the runs in flight and what they started are gone. */
static void check_stop(void)
{
	if (stop_signal) {
		int st;
		for (size_t i = 0; i < nrunning; i++)
			if (running[i] > 0)
				end_run(running[i], &st);
		if (isatty(2))
			fputc('\n', stderr); /* after the progress line */
		tool_error("stopped by SIG%s; the runs in flight were killed",
		           sigabbrev_np(stop_signal) ? sigabbrev_np(stop_signal) : "?");
		exit(128 + stop_signal);
	}
}

/* ------------------------------------------------------------------------
 * Running the program
 * ---------------------------------------------------------------------- */

void run_paths(int idx, const char *what, char *out, size_t n)
{
	snprintf(out, n, "%s/%d.%s", opt.tmp, idx, what);
}

/* MALLOC_CONF for the runs: the caller's, plus jemalloc's junk filling. */
void junk_conf(char *out, size_t n)
{
	const char *mc = getenv("MALLOC_CONF");
	snprintf(out, n, "%s%sjunk:true", mc ? mc : "", mc && *mc ? "," : "");
}

/* What a run is started with (keeper.c calls start_run in the run). */
struct run_start {
	char out[PATH_MAX + 16], err[PATH_MAX + 16], rec[PATH_MAX + 16], rep[PATH_MAX + 16];
	const char *policy;
	bool recording;
};

static void start_run(void *arg)
{
	struct run_start *rs = arg;
	int in = open(opt.input[0] ? opt.input : "/dev/null", O_RDONLY);
	int o = open(rs->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e = open(rs->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || o < 0 || e < 0)
		_exit(126);
	dup2(in, 0);
	dup2(o, 1);
	dup2(e, 2);
	char pol[4096];
	snprintf(pol, sizeof(pol), "%s%s%s", opt.policy ? opt.policy : "",
	         opt.policy && *opt.policy && *rs->policy ? ";" : "", rs->policy);
	setenv("GFP_POLICY", pol, 1);
	setenv("GFP_RECORD", rs->rec, 1);
	setenv("GFP_LOG", rs->err, 1);
	if (rs->recording && opt.follow) {
		/* Every process of the program reports (%p: its pid), and the
		 * plan takes the sites of them all. */
		strcat(rs->rep, ".%p");
		setenv("GFP_REPORT", rs->rep, 1);
	} else if (rs->recording) {
		setenv("GFP_REPORT", rs->rep, 1);
	} else
		unsetenv("GFP_REPORT");
	if (!opt.follow) {
		char pidbuf[32];
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)getpid());
		setenv("GFP_INJECT_PID", pidbuf, 1);
	}
	if (opt.junk) {
		/* Error paths that read uninitialised memory crash instead of
		 * passing by luck (jemalloc fills fresh allocations). */
		char conf[1024];
		junk_conf(conf, sizeof(conf));
		setenv("MALLOC_CONF", conf, 1);
	}
	tool_set_preload(opt.lib);
	execvp(opt.argv[0], opt.argv);
	_exit(127);
}

/* Starts PROG with the extra policy under a keeper (keeper.c), whose pid
 * it returns: the keeper ends as the run ended, once nothing the run
 * started is alive. Its stdout, stderr, log and records go to files named
 * after idx. */
pid_t spawn(int idx, const char *policy, bool recording)
{
	struct run_start rs;
	run_paths(idx, "out", rs.out, sizeof(rs.out));
	run_paths(idx, "err", rs.err, sizeof(rs.err));
	run_paths(idx, "rec", rs.rec, sizeof(rs.rec));
	run_paths(idx, "report", rs.rep, sizeof(rs.rep));
	rs.policy = policy;
	rs.recording = recording;
	sigset_t old;
	stop_signals(SIG_BLOCK, &old);
	pid_t sweep = getpid();
	pid_t pid = fork();
	if (pid < 0)
		die(EXIT_USAGE, "fork: %s", strerror(errno));
	if (pid > 0) {
		setpgid(pid, pid); /* out of the terminal's foreground group */
		track(pid, 0);
		if (stop_signal) /* stopped while it was being started */
			kill(pid, SIGTERM);
		stop_signals(SIG_SETMASK, &old);
		return pid;
	}
	setpgid(0, 0);
	keeper_run(sweep, &old, start_run, &rs);
}

struct output read_output(int idx)
{
	char path[PATH_MAX + 16];
	run_paths(idx, "out", path, sizeof(path));
	struct output o = {NULL, 0};
	o.text = text_slurp(path, &o.len);
	if (!o.text)
		o.text = strdup(""), o.len = 0;
	return o;
}

/* Waits for a run with a timeout; ends it on expiry. */
int wait_run(pid_t pid, double started, double timeout, bool *timed_out)
{
	int st = 0;
	*timed_out = false;
	for (;;) {
		check_stop();
		pid_t r = reap(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (timeout > 0 && now() - started > timeout) {
			end_run(pid, &st);
			*timed_out = true;
			break;
		}
		usleep(2000);
	}
	return st;
}

/* ------------------------------------------------------------------------
 * Running the plan, -j at a time
 * ---------------------------------------------------------------------- */

double run_timeout(void)
{
	if (opt.timeout_s)
		return opt.timeout_s;
	double t = opt.rec_seconds * 10;
	return t < 2 ? 2 : t;
}

/* Runs runs[from..nruns). */
void execute(size_t from)
{
	struct output rec_out = read_output(0);
	size_t next = from, done = from, active = 0;
	int *slot_run = calloc((size_t)opt.jobs, sizeof(int));
	bool tty = isatty(2);
	double t0 = now();
	while (done < nruns) {
		while (active < (size_t)opt.jobs && next < nruns) {
			for (int s = 0; s < opt.jobs; s++) {
				if (slot_run[s])
					continue;
				char pol[512];
				policy_of(&runs[next], pol, sizeof(pol));
				runs[next].started = now();
				runs[next].pid = spawn((int)next + 1, pol, false);
				slot_run[s] = (int)next + 1;
				next++;
				active++;
				break;
			}
		}
		for (int s = 0; s < opt.jobs; s++) {
			if (!slot_run[s])
				continue;
			struct run *r = &runs[slot_run[s] - 1];
			int st;
			pid_t w = reap(r->pid, &st, WNOHANG);
			bool to = false;
			if (w == 0 && now() - r->started > run_timeout()) {
				end_run(r->pid, &st);
				to = true;
				w = r->pid;
			}
			if (w != r->pid)
				continue;
			r->seconds = now() - r->started;
			classify(r, slot_run[s], st, to, &rec_out);
			slot_run[s] = 0;
			active--;
			done++;
			if (tty) {
				double el = now() - t0,
				       eta = el / (double)(done - from) * (double)(nruns - done);
				fprintf(stderr, "\r%zu/%zu runs, %.0fs left   ", done, nruns, eta);
			}
		}
		usleep(1000);
		check_stop();
	}
	if (tty)
		fprintf(stderr, "\r%60s\r", "");
	free(slot_run);
	free(rec_out.text);
}

/* Re-runs a group's first failure point alone: the reproducer must give
 * the same outcome again. */
bool confirm(const struct run *r, int idx)
{
	char pol[512];
	policy_of(r, pol, sizeof(pol));
	struct output rec_out = read_output(0);
	struct run again = *r;
	double t0 = now();
	pid_t pid = spawn(idx, pol, false);
	bool to;
	int st = wait_run(pid, t0, run_timeout(), &to);
	classify(&again, idx, st, to, &rec_out);
	free(rec_out.text);
	return again.outcome == r->outcome;
}
