/*
 * inject_structs.h - inject.c's part of the thread-local state (gfp_tls.inject,
 * thread.h), apart from inject.h so that thread.h can embed it. The gap and
 * the policy thread's calls to its next injection (gfp_tls.gap, inject_left)
 * stay beside the countdown, on the routes' cache line.
 */
#ifndef GFP_INJECT_STRUCTS_H
#define GFP_INJECT_STRUCTS_H

#include <stdint.h>

struct gfp_tls_inject {
	uint64_t ordinal;  /* from the thread's creation order */
	uint64_t children; /* threads this one created */
	uint64_t rng;      /* the thread's generator, 0 = unseeded */
	uint64_t calls;    /* eligible calls of this thread */
	int8_t initial;    /* the process's initial thread: 1 yes, -1 no, 0 not known yet */
};

#endif /* GFP_INJECT_STRUCTS_H */
