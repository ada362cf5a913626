/*
 * slowpath.c - the slow path, entered when an attempt failed.
 *
 * It will read top to bottom like the kernel's __alloc_pages_slowpath:
 * inject, attempt, reclaim, retry decision, OOM step, wait, canary. Until a
 * budget or a retry policy is configured there is nothing to reclaim and no
 * one to wait for, so a real failure of jemalloc reaches the caller exactly
 * as it would under plain jemalloc: NULL and ENOMEM.
 */
#include <errno.h>

#include "slowpath.h"

void *gfp_slowpath(struct gfp_req *req)
{
	(void)req;
	errno = ENOMEM;
	return NULL;
}
