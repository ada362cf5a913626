/* --shard auto (tools/gfp-sweep/shard.c): this part's number and the
 * number of parts from each job runner's variables, the innermost runner
 * first; what is no part of a whole is refused (exit 2) with why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "sweep.h"

static const char *const vars[] = {
    "GFP_SHARD_INDEX",      "GFP_SHARD_COUNT",       "PARALLEL_SEQ",
    "JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID",   "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_MAX",
    "CI_NODE_INDEX",        "CI_NODE_TOTAL",
};

/* The environment: "NAME=VALUE" words, the rest of vars unset. */
static void env(const char *const *set)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	for (; *set; set++) {
		char name[64];
		const char *eq = strchr(*set, '=');
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *set), *set);
		setenv(name, eq + 1, 1);
	}
}

static void part_is(const char *const *set, int k, int n, const char *from)
{
	env(set);
	opt.shard_k = opt.shard_n = 0;
	shard_auto();
	if (opt.shard_k != k || opt.shard_n != n || strcmp(opt.shard_from, from) != 0) {
		fprintf(stderr, "%s...: %d/%d from '%s', not %d/%d from '%s'\n", set[0],
		        opt.shard_k, opt.shard_n, opt.shard_from, k, n, from);
		check_failures++;
	}
}

static void each_runner(void)
{
	part_is((const char *const[]){"GFP_SHARD_INDEX=2", "GFP_SHARD_COUNT=4", NULL}, 3, 4,
	        "GFP_SHARD_INDEX=2 GFP_SHARD_COUNT=4");
	part_is((const char *const[]){"PARALLEL_SEQ=1", "GFP_SHARD_COUNT=3", NULL}, 1, 3,
	        "PARALLEL_SEQ=1 GFP_SHARD_COUNT=3");
	part_is((const char *const[]){"JOB_COMPLETION_INDEX=0", "GFP_SHARD_COUNT=2", NULL}, 1, 2,
	        "JOB_COMPLETION_INDEX=0 GFP_SHARD_COUNT=2");
	part_is((const char *const[]){"CI_NODE_INDEX=2", "CI_NODE_TOTAL=2", NULL}, 2, 2,
	        "CI_NODE_INDEX=2 CI_NODE_TOTAL=2");
	/* a Slurm array is a range: its tasks MIN, MIN+STEP, ... */
	part_is((const char *const[]){"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_COUNT=4",
	                              "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=3", NULL},
	        1, 4, "SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=4");
	part_is((const char *const[]){"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_COUNT=4",
	                              "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_STEP=2",
	                              "SLURM_ARRAY_TASK_MAX=7", NULL},
	        3, 4, "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=4");
	/* GNU parallel inside a Slurm task splits that task's work */
	part_is((const char *const[]){"PARALLEL_SEQ=2", "GFP_SHARD_COUNT=2",
	                              "SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=4",
	                              "SLURM_ARRAY_TASK_MIN=0", NULL},
	        2, 2, "PARALLEL_SEQ=2 GFP_SHARD_COUNT=2");
}

/* shard_auto in a child: its exit status, its stderr in err. */
static int refused(const char *const *set, const char *why)
{
	int pipefd[2];
	if (pipe(pipefd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		env(set);
		shard_auto();
		_exit(0);
	}
	close(pipefd[1]);
	char err[1024];
	size_t len = 0;
	ssize_t r;
	char rest[256];
	while ((r = read(pipefd[0], len + 1 < sizeof(err) ? err + len : rest,
	                 len + 1 < sizeof(err) ? sizeof(err) - 1 - len : sizeof(rest))) > 0)
		len += len + 1 < sizeof(err) ? (size_t)r : 0;
	err[len] = '\0';
	close(pipefd[0]);
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 2 || !strstr(err, why)) {
		fprintf(stderr, "%s...: '%s' without '%s'\n", set[0] ? set[0] : "(none)", err, why);
		check_failures++;
	}
	return 0;
}

static void no_part_of_a_whole(void)
{
	refused((const char *const[]){NULL}, "no job runner's part number in the environment");
	refused((const char *const[]){"GFP_SHARD_INDEX=1", NULL},
	        "GFP_SHARD_INDEX=1 (explicit (a GitHub Actions matrix)) but no GFP_SHARD_COUNT");
	refused((const char *const[]){"GFP_SHARD_INDEX=4", "GFP_SHARD_COUNT=4", NULL},
	        "not a part of 4");
	refused((const char *const[]){"PARALLEL_SEQ=0", "GFP_SHARD_COUNT=4", NULL},
	        "not a part of 4 (GNU parallel counts from 1)");
	refused((const char *const[]){"CI_NODE_INDEX=1", "CI_NODE_TOTAL=0", NULL},
	        "CI_NODE_TOTAL=0: no parts");
	refused((const char *const[]){"GFP_SHARD_INDEX=x", "GFP_SHARD_COUNT=4", NULL},
	        "GFP_SHARD_INDEX='x' is not a whole number");
	refused((const char *const[]){"GFP_SHARD_INDEX=-1", "GFP_SHARD_COUNT=4", NULL},
	        "is not a whole number");
	refused((const char *const[]){"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_COUNT=4", NULL},
	        "but no SLURM_ARRAY_TASK_MIN");
	refused((const char *const[]){"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_COUNT=3",
	                              "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_STEP=2",
	                              "SLURM_ARRAY_TASK_MAX=5", NULL},
	        "is not one of a range");
	refused((const char *const[]){"SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_TASK_COUNT=3",
	                              "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=9", NULL},
	        "is not one of a range");
}

int main(void)
{
	each_runner();
	no_part_of_a_whole();
	return CHECK_DONE();
}
