/*
 * main.c - gfp-allocbench's command line: picks a workload (allocbench.c),
 * times it and writes its one line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocbench.h"

#define EXIT_USAGE 2

static void usage(FILE *f)
{
	fprintf(f, "usage: gfp-allocbench WORKLOAD [ITERS]\n"
	           "Runs one deterministic allocator workload and prints\n"
	           "\"WORKLOAD seconds=<float> ops=<n>\". Workloads (default ITERS):\n");
	for (size_t i = 0; i < allocbench_count; i++)
		fprintf(f, "  %-8s %llu\n", allocbench_workloads[i].name,
		        (unsigned long long)allocbench_workloads[i].default_iters);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const struct workload *w = NULL;
	uint64_t iters, ops;
	double t0, t1;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 2 || argc > 3) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < allocbench_count; i++)
		if (!strcmp(argv[1], allocbench_workloads[i].name))
			w = &allocbench_workloads[i];
	if (!w) {
		fprintf(stderr, "gfp-allocbench: unknown workload '%s'\n", argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	iters = w->default_iters;
	if (argc == 3) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(argv[2], &end, 10);
		if (errno || end == argv[2] || *end || v == 0 || argv[2][0] == '-') {
			fprintf(stderr,
			        "gfp-allocbench: ITERS must be a positive integer, not '%s'\n",
			        argv[2]);
			return EXIT_USAGE;
		}
		iters = v;
	}

	t0 = now();
	ops = w->run(iters);
	t1 = now();

	/* stdio would allocate its buffer: the line goes out with one write */
	char line[160];
	int len = snprintf(line, sizeof(line), "%s seconds=%.6f ops=%llu injected=%llu\n", w->name,
	                   t1 - t0, (unsigned long long)ops, (unsigned long long)injected);
	if (write(STDOUT_FILENO, line, (size_t)len) != len)
		return 1;
	return 0;
}
