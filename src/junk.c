/*
 * junk.c - junk=: new memory filled with jemalloc's junk byte, so that a
 * program that reads memory it never wrote (an uninitialised pointer or
 * length on an error path) crashes there instead of passing by luck, as
 * jemalloc's opt.junk would make it.
 *
 * Unlike opt.junk it fills only the first junk= bytes of a new block (and
 * of the bytes a realloc adds) and never a freed block: a program that takes
 * a large buffer and touches a little of it (file(1) allocates 8 MiB for
 * the file it reads, and reads 100 KiB) is not made to fault in every page,
 * and frees cost what jemalloc's cost. A reader of uninitialised memory
 * still meets the fill: the fields of a struct, the slots of an array just
 * past the ones written (a growing array's new slots are the bytes its
 * realloc added) lie in the first bytes.
 *
 * Only on the policy path (route.c sends every allocation there while junk=
 * is set); it allocates nothing and takes no lock.
 */
#include <jemalloc/jemalloc.h>
#include <string.h>

#include "meaning.h"
#include "junk.h"

size_t junk_old_usable(const struct gfp_req *req)
{
	return req->old && gfp_policy.junk ? sallocx(req->old, 0) : 0;
}

void junk_fill(const struct gfp_req *req, void *p, size_t old_usable)
{
	if (req->mallocx_flags & MALLOCX_ZERO)
		return;
	/* The usable size, as opt.junk fills it: a program may use the
	 * slack, and a later realloc counts it as the old block's. */
	size_t usable = sallocx(p, 0), from = req->old ? old_usable : 0;
	if (usable <= from)
		return;
	size_t n = usable - from;
	if (n > (size_t)gfp_policy.junk)
		n = (size_t)gfp_policy.junk;
	memset((char *)p + from, GFP_JUNK_BYTE, n);
}
