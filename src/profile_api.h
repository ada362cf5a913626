/*
 * profile_api.h - profile.c: stats=sites, per-call-site statistics and live
 * bytes, as the engine calls it. The profiled routes' inlines over the shadow
 * map are in profile.h.
 */
#ifndef GFP_PROFILE_API_H
#define GFP_PROFILE_API_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"
#include "thread.h"
#include "types.h"

#pragma GCC visibility push(hidden)

struct gfp_caller_counts {
	int64_t live_bytes, live_calls;
	uint64_t calls, bytes, failures, injections, retries, max_stall_ns;
};
extern bool gfp_profile_on;

/* A thread past its exit whose every call must still reach raw_alloc and
 * free_other: the budget counted what it held (exit_counted), or stats=sites
 * must clear the map for its reallocs and frees. */
static inline bool gfp_exit_watched(void)
{
	return gfp_tls.exit_counted || (gfp_tls.exiting && gfp_profile_on);
}
void profile_init(void);
void profile_before_realloc(struct gfp_req *req);
void profile_after_realloc(const struct gfp_req *req, void *p);
void profile_count(struct gfp_req *req, void *p);
bool profile_count_quick(void *p, const struct gfp_stash *s);
void profile_slow(struct gfp_req *req, unsigned rounds, uint64_t ns);
void profile_free(const void *p);
void profile_thread_exit(struct gfp_thread *t);
void profile_report(struct gfp_buf *b);
/* The top `max` call sites by live bytes, a line each after a newline and
 * `prefix`, for the OOM and allocation-failure reports; nothing when
 * another report is being written. */
void profile_top(struct gfp_buf *b, const char *prefix, unsigned max);
void profile_atfork_child(void);
/* Mappings the program made itself (mapped.c): the index of the caller of
 * the call (0: not counted), one call of it that mapped `bytes` or failed,
 * and its live bytes and live mappings changing, from any thread. */
unsigned profile_caller(uintptr_t caller);
void profile_mapped_call(unsigned idx, uint64_t bytes, bool failed);
void profile_mapped(unsigned idx, int64_t bytes, int64_t pieces);

#pragma GCC visibility pop

#endif /* GFP_PROFILE_API_H */
