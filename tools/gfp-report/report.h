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
void frames_add_user_dir(const char *dir);
/* Frees what finding modules kept. */
void frames_free(void);
void frames_set_dirs(const char *prog);
void frames_print(const struct rec_frame *fr, bool return_address);
/* The frames of rec (a record, or a report's site), as records.c wrote them. */
void frames_print_json(const struct jval *rec, bool top_is_pc);
/* gfp-sweep's frames: a group's "injection_frames" or "crash_frames",
 * an array of frame.h's objects (or, from a gfp-sweep before them, text
 * lines as frames_each_text reads). */
void frames_print_sweep(const struct jval *frames, bool top_is_pc);
void frames_print_sweep_one(const struct jval *o, bool return_address);
/* Frames as older gfp-sweeps wrote them, lines "    sym+off (module+off)",
 * taken apart for fn: mod is NULL for a line that is no frame (sym is the
 * line then); first says whether it is the first frame. fn returns false to
 * stop. */
void frames_each_text(const char *frames, frame_text_fn *fn, void *ctx);

/* print.c */
enum kind print_kind(const struct jval *v);
bool print_file(const char *path);

/* results.c: a gfp-sweep --json result (a sweep's, or a campaign's). */
void results_print(const char *path, const struct jval *sw);

/* allocinfo.c */
enum ai_sort { SORT_LIVE, SORT_PEAK, SORT_CALLS };
bool allocinfo_show(const char *path, long top, enum ai_sort sort);

/* parts.c: one part of a merge (a file), or one target of a campaign's
 * part. */
struct part {
	const char *path;
	struct jval doc;      /* the file */
	const struct jval *v; /* the sweep: the file, or one target of a campaign's */
	const struct jval *results, *groups;
	long k, n;
};
/* The file at p->path into p: a gfp-sweep result, checked; false after an
 * error (said). */
bool parts_load(struct part *p);
/* "shard": "K/N" into p->k and p->n; false (said) when it is not one. */
bool parts_shard(struct part *p);
/* The fields a sweep's merge reads, p->v's (a file's, or a campaign
 * target's). */
bool parts_check_sweep(struct part *p);
/* Every part comes from the same sweep, each shard exactly once. */
bool parts_check(const struct part *parts, size_t np);
/* targets[t][i]: target t of the first part in part i, checked; NULL after
 * an error. */
struct part **parts_targets(struct part *parts, size_t np, size_t *nt);
void parts_free_targets(struct part **tp, size_t nt, size_t np);

/* merge.c */
int merge_main(int argc, char **argv);

/* The tools' messages, xrealloc and xstrdup (tool.h), by the names this
 * tool's files call them. */
#define error   tool_error
#define warning tool_warning

#endif
