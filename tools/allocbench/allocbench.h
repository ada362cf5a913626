/*
 * allocbench.h - what gfp-allocbench's workloads (allocbench.c) give its
 * command line (main.c).
 */
#ifndef GFP_ALLOCBENCH_H
#define GFP_ALLOCBENCH_H

#include <stddef.h>
#include <stdint.h>

struct workload {
	const char *name;
	uint64_t (*run)(uint64_t iters); /* the operations made */
	uint64_t default_iters;          /* ~0.3-0.6 s under plain jemalloc */
};

extern const struct workload allocbench_workloads[];
extern const size_t allocbench_count;

/* Failed allocations, retried: the armed mode of tools/bench injects some. */
extern uint64_t injected;

#endif
