/*
 * shard.c - --shard auto: this part's number and the number of parts from
 * the job runner that started it, so that one manifest runs every part with
 * the same command line. It only reads the environment; the split itself is
 * plan.c's, and gfp-report merge joins the parts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

/* How one job runner numbers its parts: the variable of this part's index
 * (base: the first part's number), and that of the count. Runners that set
 * no count (Kubernetes, GNU parallel, a GitHub matrix) get it from the
 * manifest, as GFP_SHARD_COUNT. */
struct engine {
	const char *name, *index, *count;
	long base;
};

/* Innermost first: GNU parallel run inside a Slurm array task or a CI job
 * splits that job's work, so its numbers are this process's. */
static const struct engine engines[] = {
    {"explicit (a GitHub Actions matrix)", "GFP_SHARD_INDEX", "GFP_SHARD_COUNT", 0},
    {"GNU parallel", "PARALLEL_SEQ", "GFP_SHARD_COUNT", 1},
    {"a Kubernetes Indexed Job", "JOB_COMPLETION_INDEX", "GFP_SHARD_COUNT", 0},
    {"a Slurm job array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", 0},
    {"a GitLab parallel: job", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1},
};

/* A variable's whole number, at least 0; -1 when unset, dies when it is
 * not a number. */
static long env_number(const char *name)
{
	const char *v = getenv(name);
	if (!v)
		return -1;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (end == v || *end || errno || n < 0 || n > 1000000000)
		die(EXIT_USAGE, "--shard auto: %s='%s' is not a whole number", name, v);
	return n;
}

/* A Slurm array's task ID as a part number from 0: the array must be a
 * range (--array=0-3, or 1-7:2), whose tasks are MIN, MIN+STEP, ... */
static long slurm_part(long id, long count)
{
	long min = env_number("SLURM_ARRAY_TASK_MIN"), step = env_number("SLURM_ARRAY_TASK_STEP"),
	     max = env_number("SLURM_ARRAY_TASK_MAX");
	if (min < 0)
		die(EXIT_USAGE, "--shard auto: SLURM_ARRAY_TASK_ID=%ld but no SLURM_ARRAY_TASK_MIN",
		    id);
	if (step < 1)
		step = 1;
	long k = (id - min) / step;
	if (id < min || (id - min) % step || (max >= 0 && min + (count - 1) * step != max))
		die(EXIT_USAGE,
		    "--shard auto: Slurm array task %ld of %ld (min %ld, step %ld, max %ld) is not "
		    "one of a range: submit the array as a range, e.g. --array=0-%ld",
		    id, count, min, step, max, count - 1);
	return k;
}

void shard_auto(void)
{
	const struct engine *e = engines;
	size_t n = sizeof(engines) / sizeof(engines[0]);
	while (e < engines + n && !getenv(e->index))
		e++;
	if (e == engines + n)
		die(EXIT_USAGE,
		    "--shard auto: no job runner's part number in the environment "
		    "(GFP_SHARD_INDEX, "
		    "PARALLEL_SEQ, JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, CI_NODE_INDEX): run "
		    "it as a part of a Kubernetes Indexed Job, a Slurm job array, a GitLab "
		    "parallel: job, a GitHub Actions matrix or GNU parallel, or give --shard K/N");
	long idx = env_number(e->index), count = env_number(e->count);
	if (count < 0)
		die(EXIT_USAGE,
		    "--shard auto: %s=%ld (%s) but no %s: set it to the number of parts in the "
		    "manifest",
		    e->index, idx, e->name, e->count);
	if (count < 1)
		die(EXIT_USAGE, "--shard auto: %s=0: no parts", e->count);
	long k =
	    strcmp(e->index, "SLURM_ARRAY_TASK_ID") == 0 ? slurm_part(idx, count) : idx - e->base;
	if (k < 0 || k >= count)
		die(EXIT_USAGE,
		    "--shard auto: %s=%ld but %s=%ld: not a part of %ld (%s counts from %ld)",
		    e->index, idx, e->count, count, count, e->name, e->base);
	opt.shard_k = (int)k + 1;
	opt.shard_n = (int)count;
	snprintf(opt.shard_from, sizeof(opt.shard_from), "%s=%ld %s=%ld", e->index, idx, e->count,
	         count);
}
