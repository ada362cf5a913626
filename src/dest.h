/*
 * dest.h - dest.c: every destination the shim writes to (GFP_LOG, GFP_RECORD,
 * GFP_REPORT) and writing to one; dest_set.h opens one, dest_report.h
 * writes a report, dest_inherit.h hands one to the children.
 */
#ifndef GFP_DEST_H
#define GFP_DEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* What the messages quote of a path. */
#define GFP_DEST_QUOTED 512
/* The temporary name beside the report's, and its pid when %p expands. */
#define GFP_DEST_SLACK 64

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
	/* A report's path: the run's first process (see dest_report.c), its start
	 * time, and whether this process is that one. */
	pid_t run_pid;
	unsigned long long run_start;
	bool run_first;
	bool export_path; /* path is the value made absolute: the children get it */
};
/* One write(2) of the text: false when it failed (the first failure is
 * reported, later writes are not tried). Keeps errno; never raises SIGPIPE. */
bool gfp_dest_write(struct gfp_dest *d, const char *p, size_t n);
/* gfp_write_all to fd with SIGPIPE blocked and cancellation disabled. */
bool gfp_dest_write_fd(int fd, const char *p, size_t n);
bool gfp_dest_on(const struct gfp_dest *d);
/* Whether d writes somewhere of its own: a path, or fd:N above 2 (not the
 * program's stdout or stderr). */
bool gfp_dest_private(const struct gfp_dest *d);
/* d writes to fd, which path opened: st tells it from what the program may
 * put under its number later. */
struct stat;
void gfp_dest_keep(struct gfp_dest *d, int fd, const struct stat *st, const char *path);

/* The log's destination (GFP_LOG: stderr unless log.c sets it). It lives
 * here, below the log, so that a destination's failure is said without
 * calling up into log.c. */
extern struct gfp_dest gfp_dest_log;
/* One message line, prefix ("gfpshim: warning: ") and text, with one
 * write(2) to the log's destination; never allocates, keeps errno. */
void gfp_dest_vsay(const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
void gfp_dest_say(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#pragma GCC visibility pop

#endif /* GFP_DEST_H */
