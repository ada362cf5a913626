/*
 * dest.h - dest.c: every destination the shim writes to (GFP_LOG, GFP_RECORD,
 * GFP_REPORT): named once at start-up, opened once, never through a symlink;
 * and where the shim's own descriptors go.
 */
#ifndef GFP_DEST_H
#define GFP_DEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

struct gfp_buf;

enum gfp_dest_kind {
	GFP_DEST_APPEND, /* messages and records: one write(2) each, appended */
	GFP_DEST_REPORT, /* a whole file at exit: a new file renamed into place */
};
struct gfp_dest {
	const char *var; /* GFP_LOG, ...: names it in messages */
	int fd;          /* atomic; -1: nowhere (or a report's path) */
	bool own;        /* fd was opened from path: dev and ino tell it apart */
	bool pinned;     /* fd:N above 2: written only while it holds dev, ino */
	bool log;        /* GFP_LOG: its own failure goes to stderr */
	bool dead;       /* atomic: a write failed, was reported; no more */
	int lost;        /* errno: inherited, and this process cannot open it */
	dev_t dev;
	ino_t ino;
	uint64_t hash;   /* of the variable's value, for the children */
	char path[1024]; /* a report's path (%p: the pid), or what fd opened */
	/* A report's path: the run's first process (see dest.c), its start
	 * time, and whether this process is that one. */
	pid_t run_pid;
	unsigned long long run_start;
	bool run_first;
	bool export_path; /* path is the value made absolute: the children get it */
};
/* Parses stderr, fd:N (also /dev/stdout, /dev/stderr, /dev/fd/N) or a path
 * into d and checks it can be written; 0, or -1 with one line in err. A
 * path is ignored when secure. */
int gfp_dest_set(struct gfp_dest *d, const char *var, enum gfp_dest_kind kind, const char *value,
                 bool secure, char *err, size_t errlen);
/* One write(2) of the text: false when it failed (the first failure is
 * reported, later writes are not tried). Keeps errno; never raises SIGPIPE. */
bool gfp_dest_write(struct gfp_dest *d, const char *p, size_t n);
/* A report: the whole text, into a file that replaces the path (or down
 * the descriptor); failures are reported. Without %p, the run's first
 * process writes the path and every other PATH.PID, and one line in the
 * log names them (dest.c). */
void gfp_dest_publish(struct gfp_dest *d, const char *p, size_t n);
/* ,"run":{"pid":P,"start":S} for a report's path (nothing for a
 * descriptor): every report of one run carries the same. */
void gfp_dest_run_json(const struct gfp_dest *d, struct gfp_buf *b);
bool gfp_dest_on(const struct gfp_dest *d);
/* Whether d writes somewhere of its own: a path, or fd:N above 2 (not the
 * program's stdout or stderr). */
bool gfp_dest_private(const struct gfp_dest *d);
/* fd moved to the shim's own numbers (see dest.c), the old one closed;
 * errno kept. -1 only for a standard descriptor (0-2) that cannot move. */
int gfp_fd_lift(int fd);
/* "a directory", "a FIFO", ...: what a path is, for messages. */
const char *gfp_file_type(mode_t mode);

#pragma GCC visibility pop

#endif /* GFP_DEST_H */
