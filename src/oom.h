/*
 * oom.h - oom.c: the OOM step; what its answer means is decided in decide.h.
 */
#ifndef GFP_OOM_H
#define GFP_OOM_H

#include "decide.h"
#include "types.h"

#include <sys/types.h>

#pragma GCC visibility push(hidden)

enum oom_result oom_step(struct gfp_slow *s);
/* This process chose itself as the OOM victim: it is being killed. */
bool oom_is_victim(void);

#pragma GCC visibility pop

#endif /* GFP_OOM_H */
