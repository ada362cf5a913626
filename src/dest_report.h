/*
 * dest_report.h - dest_report.c: GFP_REPORT, a whole file at exit renamed
 * into place, and the reports of one run.
 */
#ifndef GFP_DEST_REPORT_H
#define GFP_DEST_REPORT_H

#include <stddef.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

struct gfp_buf;
struct gfp_dest;

/* A report's path tmpl, at start-up: checked (a new file can be made beside
 * it), or a device opened; 0, or -1 with one line in err (q: tmpl quoted). */
int gfp_dest_report_check(struct gfp_dest *d, const char *tmpl, const char *q, char *err,
                          size_t errlen);
/* A report's path joins the run a parent named (run_pid not 0), or starts
 * one. */
void gfp_dest_report_join(struct gfp_dest *d, pid_t run_pid, unsigned long long run_start);
/* A report: the whole text, into a file that replaces the path (or down
 * the descriptor); failures are reported. Without %p, the run's first
 * process writes the path and every other PATH.PID, and one line in the
 * log names them (dest_report.c). */
void gfp_dest_report_publish(struct gfp_dest *d, const char *p, size_t n);
/* ,"run":{"pid":P,"start":S} for a report's path (nothing for a
 * descriptor): every report of one run carries the same. */
void gfp_dest_report_run_json(const struct gfp_dest *d, struct gfp_buf *b);

#pragma GCC visibility pop

#endif /* GFP_DEST_REPORT_H */
