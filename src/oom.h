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
/* The oom_score_adj of process pid (0: this one), 0 when it cannot be read. */
int oom_read_adj(pid_t pid);
/* The kernel-style OOM report of request s and its record, ending with
 * `outcome`; `last` (a kill) always prints, the others are rate-limited. */
void oom_report(const struct gfp_slow *s, int adj, const char *outcome, bool last);
/* The kernel's show_mem for the budget, and the top call sites by live bytes
 * under stats=sites (as Linux 6.10+ appends from allocinfo): lines after a
 * newline, each starting with `prefix`. */
struct gfp_buf;
void oom_show_mem(struct gfp_buf *b, const char *prefix);

#pragma GCC visibility pop

#endif /* GFP_OOM_H */
