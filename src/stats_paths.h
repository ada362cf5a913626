/*
 * stats_paths.h - stats_paths.c: the hit table of stats=paths.
 */
#ifndef GFP_STATS_PATHS_H
#define GFP_STATS_PATHS_H

#include <stdbool.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* stats=paths: one eligible call counted on its path (inject.c numbers the
 * calls; mine: the process's initial thread made it), and the count of
 * calls before main started again. */
void stats_path_hit(uint64_t id, uint64_t call, uint64_t tcall, bool early, bool mine);
void stats_paths_restart(void);
/* The table into the report: `eligible` and `other_thread` are inject.c's
 * counts of eligible calls. */
struct gfp_buf;
void stats_paths_report(struct gfp_buf *b, uint64_t eligible, uint64_t other_thread);

#pragma GCC visibility pop

#endif /* GFP_STATS_PATHS_H */
