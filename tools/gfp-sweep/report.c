/*
 * report.c - a report's file: checked before the runs, opened, and put in
 * place whole (outfile.h), or gfp-sweep exits 2 with why; and the head the
 * JUnit and HTML reports start with.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sweep.h"

void report_check(const char *path)
{
	char why[PATH_MAX + 200];
	if (path && !outfile_check(path, why, sizeof(why)))
		die(EXIT_USAGE, "cannot write %s: %s", path, why);
}

FILE *report_file(struct outfile *o, const char *path)
{
	char why[PATH_MAX + 200];
	if (!outfile_open(o, path, why, sizeof(why)))
		die(EXIT_USAGE, "cannot write %s: %s", path, why);
	return o->f;
}

void report_done(struct outfile *o)
{
	if (!outfile_close(o))
		die(EXIT_USAGE, "cannot write %s: %s", o->path, strerror(errno));
}

void report_open(struct report_head *h, const char *path, const size_t *counts,
                 const char *stamp_fmt)
{
	h->f = report_file(&h->out, path);
	h->findings = 0;
	for (int o = 0; o < O_COUNT; o++)
		if (is_finding((enum outcome)o))
			h->findings += counts[o];
	struct tm tm;
	h->stamp[0] = '\0';
	if (localtime_r(&sweep.wall_started, &tm))
		strftime(h->stamp, sizeof(h->stamp), stamp_fmt, &tm);
	if (gethostname(h->host, sizeof(h->host) - 1) != 0)
		h->host[0] = '\0';
	h->host[sizeof(h->host) - 1] = '\0';
}
