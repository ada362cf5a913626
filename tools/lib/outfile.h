/*
 * outfile.h - the files the tools write (reports, a merged JSON, a
 * campaign's state), written so that a path someone else could reach first
 * is never written through: a report is a new file made beside its path
 * and renamed over it once whole; a state that is appended to is opened
 * without following a symlink, and only if it is a file of its own.
 */
#ifndef GFP_TOOLS_OUTFILE_H
#define GFP_TOOLS_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A report being written: f, to a new file (tmp) renamed over path by
 * outfile_close, or, when path names a descriptor (/dev/stdout,
 * /dev/fd/N) or a character device (/dev/null), to that itself. */
struct outfile {
	FILE *f;
	const char *path;
	int slot; /* its temporary's place in outfile.c's list; -1: none */
	struct out_io *io;
};

/* Whether a report can be written at path, creating nothing that stays: a
 * directory, a FIFO, a socket or a block device there is refused, and so is
 * a directory where no new file can be made. False with one line's reason
 * in why ("PATH is a FIFO ..."). */
bool outfile_check(const char *path, char *why, size_t n);
/* Starts the report (outfile_check's reasons refuse it too); false with
 * the reason in why. */
bool outfile_open(struct outfile *o, const char *path, char *why, size_t n);
/* Flushes the report to disk and renames it over its path. False with
 * errno when it could not be written whole: the temporary is removed and
 * whatever was at the path is as it was. */
bool outfile_close(struct outfile *o);
/* For a handler that is about to _exit (async-signal-safe): removes the
 * temporaries of the reports still open. Exit and die() remove them on
 * their own. */
void outfile_remove_now(void);

/* A file appended to line by line across runs (a campaign's state): opened
 * read-write and appending, made (mode 0600) if missing; never through a
 * symlink, never a FIFO, device or directory, never a file with another
 * name (a hard link), whose lines would land in someone else's file. -1
 * with one line's reason in why. */
int outfile_append_open(const char *path, char *why, size_t n);

#endif
