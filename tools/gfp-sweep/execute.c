/*
 * execute.c - running the plan: its runs -j at a time, each classified as
 * it ends (classify.c) or ended at the timeout, with the stack a hang
 * waited in (hang.c); until a stop signal, after which only the runs that
 * finished count.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep.h"

/* Ends the runs of the slots still in flight when the sweep stops: they
 * are not done, and not classified. */
static void end_slots(int *slot_run)
{
	for (int s = 0; s < opt.jobs; s++)
		if (slot_run[s]) {
			int st;
			run_end(sweep.runs[slot_run[s] - 1].pid, &st);
			slot_run[s] = 0;
		}
}

/* A run that went by its hit's call number and found another path there:
 * the program ran differently this time, and the run says nothing yet. */
static bool went_elsewhere(const struct run *r)
{
	return r->call && r->outcome == O_UNREACHED;
}

/* Runs runs[list[0..n)], or until a stop signal: the runs it finished are
 * done. */
static void execute_list(const size_t *list, size_t n, void (*done_hook)(const struct run *r))
{
	struct output rec_out = run_read_output(0);
	size_t next = 0, done = 0, findings = 0;
	int *slot_run = calloc((size_t)opt.jobs, sizeof(int));
	if (!slot_run)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < sweep.nruns; i++)
		findings += sweep.runs[i].done && is_finding(sweep.runs[i].outcome);
	double t0 = sweep_now();
	while (done < n && !stop_requested()) {
		for (int s = 0; s < opt.jobs && next < n && !stop_requested(); s++) {
			if (slot_run[s])
				continue;
			struct run *r = &sweep.runs[list[next]];
			char pol[512];
			plan_run_policy(r, pol, sizeof(pol));
			r->idx = (int)list[next] + 1;
			r->started = sweep_now();
			r->pid = run_spawn(r->idx, pol, false);
			slot_run[s] = (int)list[next] + 1;
			next++;
		}
		for (int s = 0; s < opt.jobs; s++) {
			if (!slot_run[s])
				continue;
			struct run *r = &sweep.runs[slot_run[s] - 1];
			int st;
			pid_t w = stop_reap(r->pid, &st, WNOHANG);
			bool to = false;
			char waits[sizeof(r->crash_frames)] = "";
			if (w == 0 && sweep_now() - r->started > run_timeout()) {
				hang_stack(r->idx, r->pid, waits, sizeof(waits));
				run_end(r->pid, &st);
				to = true;
				w = r->pid;
			}
			if (w != r->pid)
				continue;
			slot_run[s] = 0;
			/* A stop's SIGTERM may be what ended it: no result. */
			if (stop_requested())
				continue;
			r->seconds = sweep_now() - r->started;
			classify_run(r, r->idx, st, to, &rec_out);
			if (r->outcome == O_HANG && waits[0])
				memcpy(r->crash_frames, waits, sizeof(waits));
			r->done = true;
			if (done_hook && !went_elsewhere(r))
				done_hook(r);
			done++;
			findings += is_finding(r->outcome);
		}
		double el = sweep_now() - t0;
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
void execute_runs(size_t from, void (*done)(const struct run *r))
{
	size_t *list = malloc((sweep.nruns - from + 1) * sizeof(*list)), n = 0;
	if (!list)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = from; i < sweep.nruns; i++)
		list[n++] = i;
	execute_list(list, n, done);
	n = 0;
	for (size_t i = from; i < sweep.nruns; i++)
		if (sweep.runs[i].done && went_elsewhere(&sweep.runs[i])) {
			sweep.runs[i].call = 0;
			sweep.runs[i].done = false;
			list[n++] = i;
		}
	if (n && !stop_requested()) {
		tool_note("%zu run%s found another call path at the hit's call number: run%s "
		          "again by the hit",
		          n, n == 1 ? "" : "s", n == 1 ? "s" : "");
		execute_list(list, n, done);
	}
	free(list);
}

/* After the runs: those that did not finish (the sweep was stopped) are
 * dropped, so that every report holds the finished ones in plan order. */
void execute_keep_finished(void)
{
	size_t kept = 0;
	for (size_t i = 0; i < sweep.nruns; i++)
		if (sweep.runs[i].done)
			sweep.runs[kept++] = sweep.runs[i];
	sweep.runs_planned = sweep.nruns;
	sweep.runs_done = kept;
	sweep.nruns = kept;
}
