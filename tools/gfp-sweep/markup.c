/*
 * markup.c - text as XML and HTML carry it, for the JUnit and HTML reports:
 * markup escaped, and what XML cannot carry (or a browser would act on) as
 * U+FFFD, so that the file parses and shows whatever the program wrote.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "sweep.h"

/* Writes n bytes of s as XML or HTML text (or an attribute value when
 * attr). Markup characters are escaped, and what XML 1.0 cannot carry -
 * control characters, malformed UTF-8 in the program's arguments or output -
 * becomes U+FFFD, so that the file parses whatever the program did. */
void markup_esc_n(FILE *f, const char *s, size_t n, bool attr)
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

void markup_esc(FILE *f, const char *s, bool attr)
{
	markup_esc_n(f, s, strlen(s), attr);
}

/* A program's own text (its stderr) as markup_esc writes it, each control
 * of text_hidden_control as U+FFFD too. */
void markup_program_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s), *from = p;
	while (p < end) {
		size_t k = *p >= 0x80 ? text_utf8_len(p, end) : 1;
		if (k > 1 && text_hidden_control(p, k)) {
			markup_esc_n(f, (const char *)from, (size_t)(p - from), false);
			fputs("&#xFFFD;", f);
			from = p + k;
		}
		p += k ? k : 1;
	}
	markup_esc_n(f, (const char *)from, (size_t)(end - from), false);
}

/* Closes m and writes its text to f, escaped. */
void markup_flush(struct membuf *m, FILE *f, bool attr)
{
	fclose(m->f);
	markup_esc_n(f, m->buf, m->len, attr);
	free(m->buf);
}
