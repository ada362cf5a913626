/*
 * journal.h - a campaign's --state file (journal.c), for campaign.c and
 * campaign-out.c.
 */
#ifndef GFP_SWEEP_JOURNAL_H
#define GFP_SWEEP_JOURNAL_H

#include "targets.h"
#include "json.h"

/* What counts of one target: its last recording ("target": key, eligible,
 * sites, rec_status, unstable, planned, program) or error, the runs
 * finished since, and "done" once they all were (planned, findings as
 * [first, count, rerun, confirmed], run_finding; a state of a gfp-sweep
 * before findings has groups and run_group). NULL, 0: nothing yet. */
struct segment {
	const struct jval *target, *done;
	const char *error, *key;
	bool fatal; /* the error ended gfp-sweep: not tried again */
	const struct jval **runs;
	size_t nruns, cap;
};

/* Reads the state (or starts it with the options' line; exit 2 when it was
 * written with other options), then keeps it open to append. */
void journal_open(const char *path, const struct target *targets, size_t ntargets);
const struct segment *journal_segment(size_t t);
/* Each appends one line, and counts it in the target's segment. */
void journal_target(size_t t, const char *key);
void journal_error(size_t t, const char *key, const char *why, bool fatal);
void journal_run(size_t t, size_t pos, const struct run *r);
void journal_done(size_t t, const struct finding *fs, size_t nfs);
/* A "run" line back into *r (done); returns its plan position. */
size_t journal_restore(const struct jval *line, struct run *r);

#endif
