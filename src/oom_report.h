/*
 * oom_report.h - oom_report.c: the OOM step's report and record.
 */
#ifndef GFP_OOM_REPORT_H
#define GFP_OOM_REPORT_H

#include <stdbool.h>

#include "types.h"

#pragma GCC visibility push(hidden)

struct gfp_slow;
/* The OOM step's record of request s ("oom" event), with its backtrace
 * frames[0..n) and `outcome`. */
void oom_record(const struct gfp_slow *s, const char *outcome, const struct gfp_frame *frames,
                int n);
/* The kernel-style OOM report of request s and its record, ending with
 * `outcome`; `last` (a kill) always prints, the others are rate-limited. */
void oom_report(const struct gfp_slow *s, int adj, const char *outcome, bool last);

#pragma GCC visibility pop

#endif /* GFP_OOM_REPORT_H */
