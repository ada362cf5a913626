/*
 * run.c - running the program: a keeper per run, -j at a time, with a timeout,
 * and stopping them all on a signal. It owns the runs' processes and files;
 * what a run's end means is classify.c's.
 */
#include <dirent.h>
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

#include "infile.h"
#include "launch.h"
#include "tool.h"
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
	double t0 = now();
	const struct timespec pause = {0, 1000000};
	for (;;) {
		bool left = false;
		for (size_t i = 0; i < nrunning; i++)
			if (running[i] > 0 && waitpid(running[i], NULL, WNOHANG) == 0)
				left = true;
			else
				running[i] = 0;
		if (!left || now() - t0 > 1)
			return;
		nanosleep(&pause, NULL);
	}
}

/* The first stop signal kills the runs in flight and lets the sweep report
 * the runs that finished (execute, wait_run); a second one, a second or more
 * later, ends it at once, without a report. Sooner it is the same stop:
 * timeout(1) signals the sweep, then its process group. */
static void on_stop(int sig)
{
	static double first;
	bool again = stop_signal != 0;
	if (again && now() - first < 1)
		return;
	if (!again)
		first = now();
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
static void stop_signals(int how, sigset_t *old)
{
	sigset_t set;
	stop_set(&set);
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
	stop_set(&sa.sa_mask); /* one on_stop at a time */
	/* A stop the sweep goes on from (the first, or the same one again)
	 * must not fail the report being written with EINTR. */
	sa.sa_flags = SA_RESTART;
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

/* ------------------------------------------------------------------------
 * Running the program
 * ---------------------------------------------------------------------- */

void run_paths(int idx, const char *what, char *out, size_t n)
{
	snprintf(out, n, "%s/%d.%s", opt.tmp, idx, what);
}

/* A run's GFP_POLICY: the junk filling, --policy's keys (which may set
 * another junk=), then what the run is for (its failure point; stats=paths
 * for the recording run).
 *
 * The junk filling makes error paths that read memory the program never
 * wrote crash instead of passing by luck. The shim fills the first 64 KiB
 * of each new block and of what a realloc adds, not frees: jemalloc's
 * junk:true filled every byte of both, and made a program that allocates a
 * large buffer and touches a little of it several times slower (the shim's
 * junk.c says why the first bytes are enough). */
void run_policy(const char *point, char *out, size_t n)
{
	const char *junk = opt.junk ? "junk=64K" : "", *user = opt.policy ? opt.policy : "";
	snprintf(out, n, "%s%s%s%s%s", junk, *junk && (*user || *point) ? ";" : "", user,
	         *user && *point ? ";" : "", point);
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
	int o = open(rs->out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	int e = open(rs->err, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	if (in < 0 || o < 0 || e < 0)
		_exit(126);
	dup2(in, 0);
	dup2(o, 1);
	dup2(e, 2);
	char pol[4096];
	run_policy(rs->policy, pol, sizeof(pol));
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
	launch_set_preload(opt.lib);
	execvp(opt.argv[0], opt.argv);
	_exit(127);
}

/* A keeper (keeper.c) of a run that start(arg) starts: its pid, tracked. */
static pid_t start_keeper(void (*start)(void *), void *arg)
{
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
	keeper_run(sweep, &old, start, arg);
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
	return start_keeper(start_run, &rs);
}

struct output read_output(int idx)
{
	char path[PATH_MAX + 16];
	run_paths(idx, "out", path, sizeof(path));
	struct output o = {NULL, 0};
	o.text = infile_read(path, &o.len);
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
		if (stop_signal) { /* its result is not one: the caller asks stop_requested */
			end_run(pid, &st);
			break;
		}
		pid_t r = reap(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (timeout > 0 && now() - started > timeout) {
			end_run(pid, &st);
			*timed_out = true;
			break;
		}
		progress_tick();
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

/* Ends the runs of the slots still in flight when the sweep stops: they
 * are not done, and not classified. */
static void end_slots(int *slot_run)
{
	for (int s = 0; s < opt.jobs; s++)
		if (slot_run[s]) {
			int st;
			end_run(runs[slot_run[s] - 1].pid, &st);
			slot_run[s] = 0;
		}
}

void (*run_done_hook)(const struct run *r);

/* A run that went by its hit's call number and found another path there:
 * the program ran differently this time, and the run says nothing yet. */
static bool went_elsewhere(const struct run *r)
{
	return r->call && r->outcome == O_UNREACHED;
}

/* Runs runs[list[0..n)], or until a stop signal: the runs it finished are
 * done. */
static void execute_list(const size_t *list, size_t n)
{
	struct output rec_out = read_output(0);
	size_t next = 0, done = 0, findings = 0;
	int *slot_run = calloc((size_t)opt.jobs, sizeof(int));
	if (!slot_run)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < nruns; i++)
		findings += runs[i].done && is_finding(runs[i].outcome);
	double t0 = now();
	while (done < n && !stop_signal) {
		for (int s = 0; s < opt.jobs && next < n && !stop_signal; s++) {
			if (slot_run[s])
				continue;
			struct run *r = &runs[list[next]];
			char pol[512];
			run_policy_of(r, pol, sizeof(pol));
			r->idx = (int)list[next] + 1;
			r->started = now();
			r->pid = spawn(r->idx, pol, false);
			slot_run[s] = (int)list[next] + 1;
			next++;
		}
		for (int s = 0; s < opt.jobs; s++) {
			if (!slot_run[s])
				continue;
			struct run *r = &runs[slot_run[s] - 1];
			int st;
			pid_t w = reap(r->pid, &st, WNOHANG);
			bool to = false;
			char waits[sizeof(r->crash_frames)] = "";
			if (w == 0 && now() - r->started > run_timeout()) {
				hang_stack(r->idx, r->pid, waits, sizeof(waits));
				end_run(r->pid, &st);
				to = true;
				w = r->pid;
			}
			if (w != r->pid)
				continue;
			slot_run[s] = 0;
			/* A stop's SIGTERM may be what ended it: no result. */
			if (stop_signal)
				continue;
			r->seconds = now() - r->started;
			classify(r, r->idx, st, to, &rec_out);
			if (r->outcome == O_HANG && waits[0])
				memcpy(r->crash_frames, waits, sizeof(waits));
			r->done = true;
			if (run_done_hook && !went_elsewhere(r))
				run_done_hook(r);
			done++;
			findings += is_finding(r->outcome);
		}
		double el = now() - t0;
		progress_runs(done, n, findings,
		              done ? el / (double)done * (double)(n - done) : -1);
		usleep(1000);
	}
	end_slots(slot_run);
	progress_clear();
	free(slot_run);
	free(rec_out.text);
}

/* Runs runs[from..nruns). Those that went by call number and met another
 * path there run again by their hit, counted as a user's run counts it;
 * until then they are not done. */
void execute(size_t from)
{
	size_t *list = malloc((nruns - from + 1) * sizeof(*list)), n = 0;
	if (!list)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = from; i < nruns; i++)
		list[n++] = i;
	execute_list(list, n);
	n = 0;
	for (size_t i = from; i < nruns; i++)
		if (runs[i].done && went_elsewhere(&runs[i])) {
			runs[i].call = 0;
			runs[i].done = false;
			list[n++] = i;
		}
	if (n && !stop_signal) {
		tool_note("%zu run%s found another call path at the hit's call number: run%s "
		          "again by the hit",
		          n, n == 1 ? "" : "s", n == 1 ? "s" : "");
		execute_list(list, n);
	}
	free(list);
}

/* After the runs: those that did not finish (the sweep was stopped) are
 * dropped, so that every report holds the finished ones in plan order. */
void keep_finished_runs(void)
{
	size_t kept = 0;
	for (size_t i = 0; i < nruns; i++)
		if (runs[i].done)
			runs[kept++] = runs[i];
	opt.runs_planned = nruns;
	opt.runs_done = kept;
	nruns = kept;
}

/* What a confirmation starts: the printed reproducer, run by bash (whose
 * $'...' quoting it may use; bash is essential on Debian) from `dir`, not
 * the sweep's directory, with no input but what it redirects itself. */
struct repro_start {
	char out[PATH_MAX + 16], err[PATH_MAX + 16], rec[PATH_MAX + 16];
	const char *dir;
	char *command;
};

static void start_reproducer(void *arg)
{
	struct repro_start *rs = arg;
	int in = open("/dev/null", O_RDONLY);
	int o = open(rs->out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	int e = open(rs->err, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	if (in < 0 || o < 0 || e < 0 || chdir(rs->dir) != 0)
		_exit(126);
	dup2(in, 0);
	dup2(o, 1);
	dup2(e, 2);
	/* Where the run's records and log go, as for every run; the policy
	 * and whose failures they are, the reproducer's gfp-run says. */
	setenv("GFP_RECORD", rs->rec, 1);
	setenv("GFP_LOG", rs->err, 1);
	unsetenv("GFP_REPORT");
	unsetenv("GFP_POLICY");
	unsetenv("GFP_INJECT_PID");
	execl("/bin/bash", "bash", "-c", rs->command, (char *)NULL);
	_exit(127);
}

/* Runs a group's printed reproducer from another directory (/, else the
 * sweep's own files' when the runs ran in /): it must run there as printed
 * and give the same outcome again. */
bool confirm(const struct run *r, int idx)
{
	struct repro_start rs;
	run_paths(idx, "out", rs.out, sizeof(rs.out));
	run_paths(idx, "err", rs.err, sizeof(rs.err));
	run_paths(idx, "rec", rs.rec, sizeof(rs.rec));
	rs.dir = strcmp(run_dir(), "/") != 0 ? "/" : opt.tmp;
	struct membuf m;
	reproducer_exec(mem_open(&m), r);
	fclose(m.f);
	rs.command = m.buf;
	struct output rec_out = read_output(0);
	struct run again = *r;
	double t0 = now();
	pid_t pid = start_keeper(start_reproducer, &rs);
	bool to;
	int st = wait_run(pid, t0, run_timeout(), &to);
	if (!stop_signal)
		classify(&again, idx, st, to, &rec_out);
	free(rec_out.text);
	free(m.buf);
	return !stop_signal && again.outcome == r->outcome;
}
