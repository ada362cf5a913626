/*
 * run.c - one run of the program: checked to run under the shim, started
 * under a keeper (keeper.c) with its policy and its files in the sweep's
 * directory, waited for with a timeout, and ended with all it started. It
 * owns the runs' processes and files; when a stop kills them is stop.c's,
 * what a run's end means classify.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "infile.h"
#include "launch.h"
#include "keeper.h"
#include "sweep.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path) != 0 && errno != ENOENT;
}

/* The program of opt.argv, resolved into sweep.prog_path: 0 if it can run under
 * the shim, else the exit status that says why it cannot, why in *why. */
int run_check_program(char *why, size_t n)
{
	char resolved[PATH_MAX];
	sweep.prog_path[0] = '\0';
	/* A path is not looked up in PATH: why it is not there, as a shell says. */
	if (!launch_resolve(opt.argv[0], resolved, sizeof(resolved))) {
		const char *err = strchr(opt.argv[0], '/') ? strerror(errno) : "command not found";
		return snprintf(why, n, "%s: %s", opt.argv[0], err), 127;
	}
	if (!realpath(resolved, sweep.prog_path))
		sweep.prog_path[0] = '\0';
	if (access(resolved, X_OK) != 0)
		return snprintf(why, n, "%s is not executable: %s", resolved, strerror(errno)), 126;
	if (launch_is_static_elf(resolved))
		return snprintf(why, n,
		                "%s is statically linked: LD_PRELOAD cannot reach its allocations",
		                resolved),
		       126;
	return 0;
}

/* A new directory for the runs' files, removed however the sweep ends. */
void run_make_tmp(void)
{
	snprintf(opt.tmp, sizeof(opt.tmp), "%s/gfp-sweep.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(opt.tmp))
		die(EXIT_USAGE, "mkdtemp: %s", strerror(errno));
}

/* The runs' files go with the sweep, however it ends (exit, die, a signal). */
void run_remove_tmp(void)
{
	if (opt.tmp[0] && nftw(opt.tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		tool_warning("could not remove %s", opt.tmp);
	opt.tmp[0] = '\0';
}

/* Ends a run that is still going (a hang, or the sweep stopping): its
 * keeper kills it and all it started, then itself; SIGKILL to the keeper
 * only if it has not ended within 10 s. */
void run_end(pid_t keeper, int *st)
{
	kill(keeper, SIGTERM);
	double t0 = sweep_now();
	while (stop_reap(keeper, st, WNOHANG) == 0) {
		if (sweep_now() - t0 > 10) {
			kill(keeper, SIGKILL);
			stop_reap(keeper, st, 0);
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
pid_t run_start_keeper(void (*start)(void *), void *arg)
{
	sigset_t old;
	stop_hold(&old);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		die(EXIT_USAGE, "fork: %s", strerror(errno));
	if (pid > 0) {
		setpgid(pid, pid); /* out of the terminal's foreground group */
		stop_track(pid, 0);
		if (stop_requested()) /* stopped while it was being started */
			kill(pid, SIGTERM);
		stop_release(&old);
		return pid;
	}
	setpgid(0, 0);
	keeper_run(parent, &old, start, arg);
}

/* Starts PROG with the extra policy under a keeper (keeper.c), whose pid
 * it returns: the keeper ends as the run ended, once nothing the run
 * started is alive. Its stdout, stderr, log and records go to files named
 * after idx. */
pid_t run_spawn(int idx, const char *policy, bool recording)
{
	struct run_start rs;
	run_paths(idx, "out", rs.out, sizeof(rs.out));
	run_paths(idx, "err", rs.err, sizeof(rs.err));
	run_paths(idx, "rec", rs.rec, sizeof(rs.rec));
	run_paths(idx, "report", rs.rep, sizeof(rs.rep));
	rs.policy = policy;
	rs.recording = recording;
	return run_start_keeper(start_run, &rs);
}

struct output run_read_output(int idx)
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
int run_wait(pid_t pid, double started, double timeout, bool *timed_out)
{
	int st = 0;
	*timed_out = false;
	for (;;) {
		if (stop_requested()) { /* its result is not one: the caller asks stop_requested */
			run_end(pid, &st);
			break;
		}
		pid_t r = stop_reap(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (timeout > 0 && sweep_now() - started > timeout) {
			run_end(pid, &st);
			*timed_out = true;
			break;
		}
		progress_tick();
		usleep(2000);
	}
	return st;
}

double run_timeout(void)
{
	if (opt.timeout_s)
		return opt.timeout_s;
	double t = sweep.rec_seconds * 10;
	return t < 2 ? 2 : t;
}
