/*
 * junk.h - junk.c: the junk= fill of the blocks the policy path hands out.
 */
#ifndef GFP_JUNK_H
#define GFP_JUNK_H

#include <stddef.h>

#include "types.h"

#pragma GCC visibility push(hidden)

/* jemalloc's junk byte for fresh memory (opt.junk "alloc"). */
#define GFP_JUNK_BYTE 0xa5

/* What a realloc's block held before the call (its usable size), for
 * junk_fill to find the bytes it adds: 0 when junk= is off or req is no
 * realloc. Call while req->old is still the caller's. */
size_t junk_old_usable(const struct gfp_req *req);
/* Fills the bytes of p that req made new (all of a new block, what a
 * realloc added past old_usable), up to junk= of them, with GFP_JUNK_BYTE;
 * nothing for a zeroed request. */
void junk_fill(const struct gfp_req *req, void *p, size_t old_usable);

#pragma GCC visibility pop

#endif /* GFP_JUNK_H */
