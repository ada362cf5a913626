/*
 * profile_api.h - stats=sites, per-call-site statistics and live bytes, as
 * the engine calls it: profile.c (counting), profile_init.c,
 * profile_thread.c, profile_mapped.c, profile_report.c. The profiled routes'
 * inlines over the shadow map are in profile.h.
 */
#ifndef GFP_PROFILE_API_H
#define GFP_PROFILE_API_H

#include <stdbool.h>
#include <stdint.h>

#include "meaning.h"
#include "policy.h"
#include "thread.h"
#include "types.h"

#pragma GCC visibility push(hidden)

#define PROFILE_MAX_CALLERS 16384 /* caller indexes; 0: not tracked */

struct gfp_caller_counts {
	int64_t live_bytes, live_calls;
	uint64_t calls, bytes, failures, injections, retries, max_stall_ns;
};

/* A thread past its exit whose every call must still reach raw_alloc and
 * free_other: the budget counted what it held (exit_counted), or stats=sites
 * must clear the map for its reallocs and frees. */
static inline bool gfp_exit_watched(void)
{
	return gfp_tls.exit_counted || (gfp_tls.exiting && gfp_meaning.profile);
}
/* profile_init.c */
void profile_init(void);

/* profile.c */
void profile_before_realloc(struct gfp_req *req);
void profile_after_realloc(const struct gfp_req *req, void *p);
void profile_count(struct gfp_req *req, void *p);
bool profile_count_quick(void *p, const struct gfp_stash *s);
void profile_slow(struct gfp_req *req, unsigned rounds, uint64_t ns);
void profile_free(const void *p);
/* A caller's large blocks' most live bytes; where it lies (its address,
 * modules.c's index and the offset in it, taken when it was first seen). */
int64_t profile_apart_peak(unsigned idx);
uintptr_t profile_caller_where(unsigned idx, unsigned *mod, uintptr_t *off);
/* The counting's lock in a fork's child (profile_report_atfork_child calls
 * it). */
void profile_atfork_child(void);

/* profile_thread.c: a thread's counts join the dead threads' at its exit;
 * every caller's counts as of now into sum[1..], how many callers. */
void profile_thread_exit(struct gfp_thread *t);
unsigned profile_thread_sum(struct gfp_caller_counts *sum);

/* profile_mapped.c: mappings the program made itself (mapped.c): the index
 * of the caller of the call (0: not counted), one call of it that mapped
 * `bytes` or failed; whether a caller's row counts mapped bytes. */
unsigned profile_mapped_caller(uintptr_t caller);
void profile_mapped_call(unsigned idx, uint64_t bytes, bool failed);
bool profile_mapped_by(unsigned idx);
/* A caller's live bytes and live blocks changing by a block counted apart
 * (a mapping of the program's own: mapped.c), from any thread. */
void profile_live_add(unsigned idx, int64_t bytes, int64_t pieces);

/* profile_report.c */
void profile_report(struct gfp_buf *b);
/* The top `max` call sites by live bytes, a line each after a newline and
 * `prefix`, for the OOM and allocation-failure reports; nothing when
 * another report is being written. */
void profile_report_top(struct gfp_buf *b, const char *prefix, unsigned max);
/* Every lock of stats=sites in a fork's child. */
void profile_report_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_PROFILE_API_H */
