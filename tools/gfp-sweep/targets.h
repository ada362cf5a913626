/*
 * targets.h - a campaign's targets (targets.c), for the campaign's sweep
 * (campaign.c), its journal (journal.c) and its reports (campaign-out.c).
 */
#ifndef GFP_SWEEP_TARGETS_H
#define GFP_SWEEP_TARGETS_H

#include "sweep.h"

/* One target of a campaign: id, argv, stdin (absolute path, "" for
 * /dev/null), env ("NAME=VALUE"), the plain run's expected exit status, and
 * what became of it: "done", "interrupted", "not_run" or "error" (error:
 * why). */
struct target {
	char *id, **argv, *input, **env;
	int status;
	const char *state;
	char *error;
};

/* targets.c: the campaign file at path (a regular file, or "-" for the
 * standard input): a JSON array of targets, or one target per line; exit 2
 * with where and why when it is not one. Returns how many, at least one. */
size_t targets_load(const char *path, struct target **out);
/* A target's key: it changes when what its runs would do changes (its
 * argv, env, stdin, status, and the program's and input's files). */
void targets_key(const struct target *t, char out[17]);

#endif
