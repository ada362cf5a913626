/*
 * profile_mapped.c - the program's own mappings in stats=sites (mapped.c
 * charges them): the caller of each mmap, its calls and failures, and the
 * mappings' live bytes, counted apart (profile_live_add) as profile.c
 * counts a large block's.
 */
#include <stdbool.h>
#include <stdint.h>

#include "thread.h"
#include "profile_api.h"
#include "profile_externs.h"

/* Callers whose rows count mapped bytes (atomic): the report says so. */
static bool caller_maps[PROFILE_MAX_CALLERS];

unsigned profile_mapped_caller(uintptr_t caller)
{
	struct gfp_req req = {.caller = caller};
	if (!profile_counts())
		return 0;
	gfp_tls.guard++;
	unsigned idx = profile_caller_index(&req);
	gfp_tls.guard--;
	if (idx)
		__atomic_store_n(&caller_maps[idx], true, __ATOMIC_RELAXED);
	return idx;
}

void profile_mapped_call(unsigned idx, uint64_t bytes, bool failed)
{
	struct gfp_caller_counts *c = profile_counts();
	if (!c || !idx)
		return;
	gfp_count(&c[idx].calls, 1);
	if (failed)
		gfp_count(&c[idx].failures, 1);
	else
		gfp_count(&c[idx].bytes, bytes);
}

bool profile_mapped_by(unsigned idx)
{
	return __atomic_load_n(&caller_maps[idx], __ATOMIC_RELAXED);
}

/* A large block's way: counted apart, in the array of the thread that maps
 * or unmaps, which may not be the one that mapped. */
void profile_live_add(unsigned idx, int64_t bytes, int64_t pieces)
{
	profile_apart_add(idx, bytes);
	struct gfp_caller_counts *c = profile_counts();
	if (likely(c)) {
		gfp_add(&c[idx].live_bytes, bytes);
		gfp_add(&c[idx].live_calls, pieces);
	} else {
		__atomic_add_fetch(&profile_orphan[idx].bytes, bytes, __ATOMIC_RELAXED);
		__atomic_add_fetch(&profile_orphan[idx].calls, pieces, __ATOMIC_RELAXED);
	}
}
