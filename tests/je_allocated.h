/*
 * je_allocated.h - what jemalloc has handed out in this process, for the
 * test programs that check the budget's count against jemalloc's own.
 */
#ifndef GFP_JE_ALLOCATED_H
#define GFP_JE_ALLOCATED_H

#include <jemalloc/jemalloc.h>
#include <stdint.h>

#define JE_STRINGIFY_(x) #x
#define JE_STRINGIFY(x)  JE_STRINGIFY_(x)

/* stats.allocated less jemalloc's own internal allocations (each thread's
 * cache stacks, which no thread counter sees), with the caller's cache
 * flushed (threads that still run flush theirs themselves); -1 when
 * mallctl fails. */
static inline long je_allocated(void)
{
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch), allocated = 0, internal = 0, asz = sizeof(allocated);
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	if (mallctl("epoch", &epoch, &sz, &epoch, sz) != 0 ||
	    mallctl("stats.allocated", &allocated, &asz, NULL, 0) != 0 ||
	    mallctl("stats.arenas." JE_STRINGIFY(MALLCTL_ARENAS_ALL) ".internal", &internal, &asz,
	            NULL, 0) != 0)
		return -1;
	return (long)allocated - (long)internal;
}

#endif
