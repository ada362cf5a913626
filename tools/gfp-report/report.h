/*
 * report.h - what gfp-report's files share: messages, the kinds of file it
 * reads, and each file's functions.
 */
#ifndef GFP_REPORT_H
#define GFP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tool.h"
#include "json.h"

enum kind { K_NONE, K_REPORT, K_SWEEP, K_RECORD };

typedef bool frame_text_fn(void *ctx, const char *sym, const char *mod, const char *off,
                           bool first);

struct rec_frame;

/* frames.c */
/* --path DIR: searched first, in the order given. */
void add_user_dir(const char *dir);
/* Frees what finding modules kept. */
void modules_free(void);
void set_dirs(const char *prog);
void print_frame(const struct rec_frame *fr, bool return_address);
/* The frames of rec (a record, or a report's site), as records.c wrote them. */
void print_frames_json(const struct jval *rec, bool top_is_pc);
/* gfp-sweep's frames: a group's "injection_frames" or "crash_frames",
 * an array of frame.h's objects (or, from a gfp-sweep before them, text
 * lines as each_frame_text reads). */
void print_sweep_frames(const struct jval *frames, bool top_is_pc);
void print_sweep_frame(const struct jval *o, bool return_address);
/* Frames as older gfp-sweeps wrote them, lines "    sym+off (module+off)",
 * taken apart for fn: mod is NULL for a line that is no frame (sym is the
 * line then); first says whether it is the first frame. fn returns false to
 * stop. */
void each_frame_text(const char *frames, frame_text_fn *fn, void *ctx);

/* print.c */
enum kind kind_of(const struct jval *v);
bool show_file(const char *path);

/* allocinfo.c */
enum ai_sort { SORT_LIVE, SORT_PEAK, SORT_CALLS };
bool show_allocinfo(const char *path, long top, enum ai_sort sort);

/* merge.c */
int merge_main(int argc, char **argv);

/* The tools' messages, xrealloc and xstrdup (tool.h), by the names this
 * tool's files call them. */
#define error   tool_error
#define warning tool_warning

#endif
