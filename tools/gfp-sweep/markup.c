/*
 * markup.c - what the JUnit and HTML reports share: escaping for XML and
 * HTML, memory streams, and the head of a report file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "text.h"
#include "sweep.h"

FILE *mem_open(struct membuf *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f)
		die(EXIT_USAGE, "open_memstream: %s", strerror(errno));
	return m->f;
}

/* ------------------------------------------------------------------------
 * JUnit and HTML reports
 * ---------------------------------------------------------------------- */

/* Writes n bytes of s as XML or HTML text (or an attribute value when
 * attr). Markup characters are escaped, and what XML 1.0 cannot carry -
 * control characters, malformed UTF-8 in the program's arguments or output -
 * becomes U+FFFD, so that the file parses whatever the program did. */
void esc_n(FILE *f, const char *s, size_t n, bool attr)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		unsigned char c = *p;
		if (c >= 0x80) {
			size_t len = text_utf8_len(p, end);
			if (len)
				fwrite(p, 1, len, f);
			else
				fputs("&#xFFFD;", f);
			p += len ? len : 1;
			continue;
		}
		p++;
		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"' && attr)
			fputs("&quot;", f);
		else if (c == '\'' && attr)
			fputs("&#39;", f);
		else if ((c == '\n' || c == '\t' || c == '\r') && attr)
			fprintf(f, "&#%d;", c); /* attribute values normalise raw whitespace */
		else if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f))
			fputc(c, f);
		else
			fputs("&#xFFFD;", f);
	}
}

void esc(FILE *f, const char *s, bool attr)
{
	esc_n(f, s, strlen(s), attr);
}

/* A program's own text (its stderr) as esc writes it, each control above
 * as U+FFFD too. */
void esc_program_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s), *from = p;
	while (p < end) {
		size_t k = *p >= 0x80 ? text_utf8_len(p, end) : 1;
		if (k > 1 && text_hidden_control(p, k)) {
			esc_n(f, (const char *)from, (size_t)(p - from), false);
			fputs("&#xFFFD;", f);
			from = p + k;
		}
		p += k ? k : 1;
	}
	esc_n(f, (const char *)from, (size_t)(end - from), false);
}

/* Closes m and writes its text to f, escaped. */
void mem_flush(struct membuf *m, FILE *f, bool attr)
{
	fclose(m->f);
	esc_n(f, m->buf, m->len, attr);
	free(m->buf);
}

const char *point_kind(const struct run *r)
{
	return r->site[0] ? "hit" : "call";
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
	if (localtime_r(&opt.wall_started, &tm))
		strftime(h->stamp, sizeof(h->stamp), stamp_fmt, &tm);
	if (gethostname(h->host, sizeof(h->host) - 1) != 0)
		h->host[0] = '\0';
	h->host[sizeof(h->host) - 1] = '\0';
}
