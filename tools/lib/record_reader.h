/*
 * record_reader.h - the one reader of what the shim writes for the tools:
 * GFP_RECORD lines (src/records.c) and the call sites of a stats=paths
 * GFP_REPORT (src/inject.c), read by key through json.h, never by byte
 * order.
 */
#ifndef GFP_TOOLS_RECORD_READER_H
#define GFP_TOOLS_RECORD_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"

/* One frame of a record: {"module","offset"[,"symbol"]}, and where its
 * module was: the file's "modules" entry of that name,
 * {"name","path"[,"build_id"]}, or the frame's own "path" and "build_id"
 * (gfp-sweep's frames). */
struct rec_frame {
	const char *module, *offset;
	const char *symbol;   /* NULL when the shim named no symbol */
	const char *path;     /* NULL in files from before "modules" */
	const char *build_id; /* lower-case hex; NULL when the module has none */
};

/* The first record of `event` in a GFP_RECORD file's text, in *out (to be
 * json_free()d). Each line is read alone, so a line cut short by a killed
 * process spoils only itself. */
bool rec_find(const char *text, size_t len, const char *event, struct jval *out);
/* Every record of such a text in order: fn(ctx, rec), rec valid during the
 * call only. */
void rec_each(const char *text, size_t len, void (*fn)(void *ctx, const struct jval *rec),
              void *ctx);
/* Record rec's frames: how many, and the i-th; false for a frame without
 * module and offset. */
size_t rec_nframes(const struct jval *rec);
bool rec_frame(const struct jval *rec, size_t i, struct rec_frame *out);
/* The frame object o (a record's frame, an allocinfo row, a gfp-sweep
 * frame) of document doc, whose "modules" name its module's file. */
bool rec_frame_of(const struct jval *o, const struct jval *doc, struct rec_frame *out);

/* A call site of a stats=paths report: {"site":"ID","hits":N,"first":C},
 * and "startup":S when S of the hits came before main (fail.startup=1). */
struct rec_site {
	char id[17];
	unsigned long long hits, first; /* first: 0 if unknown */
	/* The first, second and last hit by the initial thread's own call
	 * numbers, when every hit was that thread's; else all 0. */
	unsigned long long tcalls[3];
	unsigned long long startup;
};
/* The sites of report rep, in order: fn(ctx, site) for each; returns the
 * report's eligible_calls (0 when it has none). */
unsigned long long rec_sites(const struct jval *rep,
                             void (*fn)(void *ctx, const struct rec_site *s), void *ctx);

#endif
