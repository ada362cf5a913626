/*
 * profile_init.c - stats=sites switched on, and the tables the profiled
 * routes read a block's usable size from (profile.h: gfp_route_map).
 */
#include <errno.h>
#include <stdint.h>

#include <jemalloc/jemalloc.h>

#include "init.h"
#include "meaning.h"
#include "profile_api.h"
#include "profile.h"

/* The tables, a size class at a time: one nallocx per class, not per size
 * (14 337 of them cost three quarters of a million instructions at every
 * start). */
void profile_init(void)
{
	if (!gfp_meaning.profile || gfp_route_map.size[0])
		return;
	gfp_route_map.chunk[0] = UINTPTR_MAX; /* NULL's chunk is none's */
	int saved = errno;
	for (size_t n = 0; n <= GFP_SIZE_TABLE_MAX;) {
		size_t usable = nallocx(n ? n : 1, 0);
		uint32_t w = gfp_size_word_of(usable);
		if (usable < n) /* cannot be: a size class holds its sizes */
			usable = n;
		for (; n <= usable && n <= GFP_SIZE_TABLE_MAX; n++)
			gfp_route_map.size[n] = w;
	}
	for (size_t pages = (GFP_SIZE_TABLE_MAX >> 12) + 1; pages <= GFP_SIZE_MID_MAX >> 12;
	     pages++) {
		size_t lo = ((pages - 1) << 12) + 1, usable = nallocx(pages << 12, 0);
		if (lo <= GFP_SIZE_TABLE_MAX)
			lo = GFP_SIZE_TABLE_MAX + 1;
		if (usable == nallocx(lo, 0) && usable <= GFP_SIZE_MID_MAX)
			gfp_route_map.size_mid[pages] = gfp_size_word_of(usable);
	}
	errno = saved;
}
