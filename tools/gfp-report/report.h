/*
 * report.h - what gfp-report's files share: messages, the kinds of file it
 * reads, and each file's functions.
 */
#ifndef GFP_REPORT_H
#define GFP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common.h"
#include "json.h"

enum kind { K_NONE, K_REPORT, K_SWEEP, K_RECORD };

typedef bool frame_text_fn(void *ctx, const char *sym, const char *mod, const char *off,
                           bool first);

struct sym_module;

/* frames.c */
/* --path DIR: searched first, in the order given. */
void add_user_dir(const char *dir);
/* Frees what finding modules kept. */
void modules_free(void);
void set_dirs(const char *prog);
struct sym_module *find_module(const char *name);
void print_frame(const char *module, const char *offset, const char *symbol, bool return_address);
/* The frames of rec (a record, or a report's site), as records.c wrote them. */
void print_frames_json(const struct jval *rec, bool top_is_pc);
/* Frames as gfp-sweep's groups hold them, lines "    sym+off (module+off)",
 * taken apart for fn: mod is NULL for a line that is no frame (sym is the
 * line then); first says whether it is the first frame. fn returns false to
 * stop. */
void each_frame_text(const char *frames, frame_text_fn *fn, void *ctx);
void print_frames_text(const char *frames, bool top_is_pc);

/* print.c */
enum kind kind_of(const struct jval *v);
bool show_file(const char *path);

/* allocinfo.c */
bool show_allocinfo(const char *path, long top);

/* merge.c */
int merge_main(int argc, char **argv);

/* The tools' messages, xrealloc and xstrdup (common.h), by the names this
 * tool's files call them. */
#define error   tool_error
#define warning tool_warning

#endif
