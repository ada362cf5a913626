/*
 * sweep.c - the model every file of gfp-sweep reads (sweep.h): the
 * options, the sweep as it goes (what the recording run counted, the runs
 * and their outcomes), what each outcome means, and the clock. It calls
 * nothing of gfp-sweep's.
 */

#include <time.h>

#include "sweep.h"

struct sweep_opt opt = {.mode = "sites",
                        .jobs = 0,
                        .timeout_s = 0,
                        .max_runs = 0,
                        .shard_k = 1,
                        .shard_n = 1,
                        .junk = true,
                        .startup = true,
                        .fail_on = 1u << O_CRASH | 1u << O_HANG | 1u << O_SILENT};

struct sweep sweep;

const char *const outcome_name[O_COUNT] = {"ok",    "silent", "handled",  "abort",
                                           "crash", "hang",   "unreached"};

const char *const outcome_help[O_COUNT] = {
    [O_OK] = "the exit status and output of the plain run",
    [O_SILENT] = "the exit status of the plain run (or 0 where it failed) but other output: "
                 "data lost without an error; with a message when the run also wrote to "
                 "stderr a line the plain runs did not",
    [O_HANDLED] = "another non-zero exit status: the program said it failed",
    [O_ABORT] = "an abort the program chose, such as xmalloc's out of memory: no finding, "
                "but each place that aborts is listed once",
    [O_CRASH] = "a signal, an abort from a memory check, or a fault the program's own "
                "handler caught and never left before the run ended badly",
    [O_HANG] = "no end within the timeout; the stack it waited in is kept",
    [O_UNREACHED] = "the failure point was never reached",
};

double sweep_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
