/*
 * stats.h - stats.c: totals per entry point, the GFP_REPORT file.
 */
#ifndef GFP_STATS_H
#define GFP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "types.h"

#pragma GCC visibility push(hidden)

/* The values of stats= are enum gfp_stats_level (policy.h). */
/* The report's largest size. stats=paths: 16384 paths of up to 85 bytes,
 * and as many allocinfo rows of up to 300. */
#define GFP_REPORT_MAX (8u << 20)
void stats_report_at_exit(void);
void stats_format(struct gfp_buf *b, struct gfp_entry_stats s[GFP_ENTRY_COUNT]);
int stats_set_report(const char *value, bool secure, char *err, size_t errlen);

#pragma GCC visibility pop

#endif /* GFP_STATS_H */
