/*
 * reclaim.h - reclaim.c: jemalloc purge, shrinkers, OOM notifiers.
 */
#ifndef GFP_RECLAIM_H
#define GFP_RECLAIM_H

#include <stdbool.h>
#include <stddef.h>

#include "gfpshim.h"

#pragma GCC visibility push(hidden)

int reclaim_shrinker_register(gfp_shrink_fn scan, void *arg, unsigned kind);
int reclaim_oom_notifier_register(gfp_oom_fn fn, void *arg);
size_t reclaim_run(gfp_t ctx, size_t want, bool with_jemalloc);
/* True unless every shrinker the context allows gave less than it was
 * asked on its last call: the estimate of what is still reclaimable. */
bool reclaim_may_free_more(gfp_t ctx);
size_t reclaim_oom_notify(void);
void reclaim_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_RECLAIM_H */
