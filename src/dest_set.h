/*
 * dest_set.h - dest_set.c: a destination named at start-up, opened once.
 */
#ifndef GFP_DEST_SET_H
#define GFP_DEST_SET_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

struct gfp_dest;

enum gfp_dest_kind {
	GFP_DEST_APPEND, /* messages and records: one write(2) each, appended */
	GFP_DEST_REPORT, /* a whole file at exit: a new file renamed into place */
};
/* Parses stderr, fd:N (also /dev/stdout, /dev/stderr, /dev/fd/N) or a path
 * into d and checks it can be written; 0, or -1 with one line in err. A
 * path is ignored when secure. */
int gfp_dest_set(struct gfp_dest *d, const char *var, enum gfp_dest_kind kind, const char *value,
                 bool secure, char *err, size_t errlen);

#pragma GCC visibility pop

#endif /* GFP_DEST_SET_H */
