/*
 * confirm.c - a finding confirmed: its first run's reproducer, as printed,
 * run again by bash from another directory, must give the same outcome.
 * Not once the sweep is stopped: the findings then are not re-run.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep.h"

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
static bool confirm(const struct run *r, int idx)
{
	struct repro_start rs;
	run_paths(idx, "out", rs.out, sizeof(rs.out));
	run_paths(idx, "err", rs.err, sizeof(rs.err));
	run_paths(idx, "rec", rs.rec, sizeof(rs.rec));
	rs.dir = strcmp(reproducer_dir(), "/") != 0 ? "/" : opt.tmp;
	struct membuf m;
	reproducer_exec(membuf_open(&m), r);
	fclose(m.f);
	rs.command = m.buf;
	struct output rec_out = run_read_output(0);
	struct run again = *r;
	double t0 = sweep_now();
	pid_t pid = run_start_keeper(start_reproducer, &rs);
	bool to;
	int st = run_wait(pid, t0, run_timeout(), &to);
	if (!stop_requested())
		classify_run(&again, idx, st, to, &rec_out);
	free(rec_out.text);
	free(m.buf);
	return !stop_requested() && again.outcome == r->outcome;
}

size_t confirm_findings(struct finding *fs, size_t *counts)
{
	size_t n = findings_group(fs, counts);
	/* Their files' indexes follow every planned run's. */
	for (size_t f = 0; f < n && !stop_requested(); f++) {
		progress_phase("confirming finding %zu of %zu", f + 1, n);
		fs[f].confirmed =
		    confirm(&sweep.runs[fs[f].first], (int)(sweep.runs_planned + 1 + f));
		fs[f].rerun = !stop_requested();
	}
	progress_clear();
	return n;
}
