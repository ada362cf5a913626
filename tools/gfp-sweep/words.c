/*
 * words.c - what every report (the console, JUnit, HTML) says the same way
 * of a run or a finding: its outcome, its counts, a call path by its
 * caller, where a silent run's output differs.
 */
#include <stdio.h>
#include <string.h>

#include "sweep.h"

/* "1 run", "3 runs" */
static void plural(FILE *f, size_t n, const char *word)
{
	fprintf(f, "%zu %s%s", n, word, n == 1 ? "" : "s");
}

void words_outcome(FILE *f, const struct run *r)
{
	fprintf(f, "%s", outcome_name[r->outcome]);
	if (r->fault) {
		fprintf(
		    f, " (signal %d %s, caught by the program's handler, which then ended the run ",
		    r->fault, strsignal(r->fault));
		if (r->signal)
			fprintf(f, "by signal %d %s)", r->signal, strsignal(r->signal));
		else
			fprintf(f, "with status %d)", r->status);
	} else if (r->signal)
		fprintf(f, " (signal %d %s)", r->signal, strsignal(r->signal));
	if (r->startup)
		fprintf(f, " at start-up, before main");
}

void words_evidence(FILE *f, const struct evidence *ev, const char *indent)
{
	fprintf(f,
	        "%soutput differs at offset %lld (line %ld, column %ld): expected %lld bytes, got "
	        "%lld\n",
	        indent, ev->offset, ev->line, ev->column, ev->expected_bytes, ev->actual_bytes);
	fprintf(f, "%s  - %s\n%s  + %s\n", indent, ev->expected, indent, ev->actual);
}

void words_counts(FILE *f, const struct finding *fd)
{
	plural(f, fd->paths, "call path");
	fputs(", ", f);
	plural(f, fd->count, "run");
}

/* The failed allocation's caller as a title names a frame (frame_title:
 * "make_title inventory.c:98", the program's own line where a library's
 * code is inlined into it). */
void words_path(FILE *f, const struct run *r)
{
	struct caller c;
	char title[600];
	if (!caller_of(r, &c))
		fprintf(f, "(no injection record)");
	else if (c.fr.info) {
		frame_title(c.fr.info, title, sizeof(title));
		fputs(title, f);
	} else
		frames_words(f, &c.fr);
}
