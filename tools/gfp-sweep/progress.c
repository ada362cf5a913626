/*
 * progress.c - how far the sweep is, on stderr: a note at least every 10 s
 * when stderr is a file or a pipe (a CI log shows the sweep alive, and how
 * long it has left), one line updated in place when it is a terminal. It
 * never writes to stdout, which holds the results.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sweep.h"

#define PROGRESS_S     10.0 /* between lines in a log */
#define PROGRESS_TTY_S 0.25 /* between updates of the terminal's line */

static double interval, last;
static bool tty;
static volatile sig_atomic_t shown; /* the terminal's line holds progress */
static char phase[160];

/* GFP_SWEEP_PROGRESS_S (undocumented) sets the log's interval, for the
 * tests. */
void progress_init(void)
{
	tty = isatty(2);
	interval = tty ? PROGRESS_TTY_S : PROGRESS_S;
	const char *v = getenv("GFP_SWEEP_PROGRESS_S");
	if (v && !tty) {
		char *end;
		errno = 0;
		interval = strtod(v, &end);
		if (end == v || *end || errno || !(interval > 0 && interval <= 3600))
			die(EXIT_USAGE, "GFP_SWEEP_PROGRESS_S is seconds, above 0, not '%s'", v);
	}
	last = sweep_now();
}

static bool due(void)
{
	return sweep_now() - last >= interval;
}

static void emit(const char *text)
{
	if (tty)
		fprintf(stderr, "\r%s\033[K", text);
	else
		tool_note("%s", text);
	fflush(stderr);
	shown = tty;
	last = sweep_now();
}

/* "41 s", "9 min", "2.5 h": as precise as a wait needs. */
static void duration(char *out, size_t n, double s)
{
	if (s < 90)
		snprintf(out, n, "%.0f s", s);
	else if (s < 90 * 60)
		snprintf(out, n, "%.0f min", s / 60);
	else
		snprintf(out, n, "%.1f h", s / 3600);
}

void progress_phase(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(phase, sizeof(phase), fmt, ap);
	va_end(ap);
}

/* From a wait for one run (the recording run, a confirmation). */
void progress_tick(void)
{
	if (!phase[0] || !due())
		return;
	char text[256], el[32];
	duration(el, sizeof(el), sweep_now() - sweep.started);
	snprintf(text, sizeof(text), "%s, %s elapsed", phase, el);
	emit(text);
}

void progress_runs(size_t done, size_t total, size_t findings, double eta)
{
	if (!due())
		return;
	char text[256], el[32], left[32];
	duration(el, sizeof(el), sweep_now() - sweep.started);
	duration(left, sizeof(left), eta);
	/* Runs, not findings: the runs are grouped into findings (one per
	 * bug) only once they are all done. */
	snprintf(text, sizeof(text), "%zu/%zu runs, %zu with a finding, %s elapsed%s%s%s", done,
	         total, findings, el, eta >= 0 ? ", ~" : "", eta >= 0 ? left : "",
	         eta >= 0 ? " left" : "");
	emit(text);
}

/* Read by a signal handler, before it writes a message. */
bool progress_on_line(void)
{
	return shown;
}

/* The terminal's line goes before the results are printed. */
void progress_clear(void)
{
	if (shown)
		fprintf(stderr, "\r\033[K");
	shown = false;
}
