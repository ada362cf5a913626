/*
 * text.c - JSON strings and shell words out, text made visible (text.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

size_t text_utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	if (c == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
		return 0;
	return n;
}

unsigned text_hidden_control(const unsigned char *p, size_t k)
{
	unsigned cp = k == 2   ? (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu)
	              : k == 3 ? (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu)
	                       : 0;
	bool hidden = (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
	              (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
	return hidden ? cp : 0;
}

void text_append(char *out, size_t n, size_t *len, const char *fmt, ...)
{
	if (*len >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(out + *len, n - *len, fmt, ap);
	va_end(ap);
	if (w > 0)
		*len = (size_t)w < n - *len ? *len + (size_t)w : n - 1;
}

void text_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	fputc('"', f);
	while (p < end) {
		size_t len = *p >= 0x80 ? text_utf8_len(p, end) : 1;
		if (len > 1)
			fwrite(p, 1, len, f);
		else if (!len)
			fputs("\\ufffd", f);
		else if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
		p += len ? len : 1;
	}
	fputc('"', f);
}

/* A character of len bytes at p that is printable UTF-8 but must not be
 * shown as itself: a C1 control (U+0080 to U+009F; a UTF-8 terminal takes
 * U+009B as CSI, as it takes ESC [), or a bidirectional control (the
 * embeddings and overrides U+202A to U+202E, the isolates U+2066 to
 * U+2069, the marks U+200E, U+200F and U+061C), which makes a reproducer
 * read in another order than the shell runs it. */
static bool is_hidden(const unsigned char *p, size_t len)
{
	if (len == 2)
		return (p[0] == 0xc2 && p[1] < 0xa0) || (p[0] == 0xd8 && p[1] == 0x9c);
	if (len != 3 || p[0] != 0xe2)
		return false;
	if (p[1] == 0x80)
		return p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae);
	return p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9;
}

/* Each byte of a hidden character as \xNN: bash's $'...' and a reader
 * both take that back. */
static void put_bytes_hex(FILE *f, const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		fprintf(f, "\\x%02x", p[i]);
}

/* Whether s has bytes that '...' would carry but a terminal, a report or a
 * copy and paste would mangle: control characters, malformed UTF-8, and
 * bidirectional controls. */
static bool needs_ansi_c_quote(const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	while (p < end) {
		size_t len = *p >= 0x80 ? text_utf8_len(p, end) : 1;
		if (!len || *p < 0x20 || *p == 0x7f || is_hidden(p, len))
			return true;
		p += len;
	}
	return false;
}

void text_visible_put(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		size_t len = *p >= 0x80 ? text_utf8_len(p, end) : 1;
		if (is_hidden(p, len))
			put_bytes_hex(f, p, len);
		else if (len > 1 || (*p >= 0x20 && *p != 0x7f && *p < 0x80) || *p == '\n' ||
		         *p == '\t' || (!len && *p >= 0xa0))
			fwrite(p, 1, len ? len : 1, f);
		else /* C0, DEL, and a stray byte an 8-bit terminal takes as C1 */
			fprintf(f, "\\x%02x", *p);
		p += len ? len : 1;
	}
}

void text_shell_quote(FILE *f, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	                    "/._-=+:,") == strlen(s)) {
		fputs(s, f);
		return;
	}
	if (needs_ansi_c_quote(s)) {
		/* bash's $'...' spells every byte in printable text, so the
		 * reproducer stays exact in the HTML and JUnit reports. */
		const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
		fputs("$'", f);
		while (p < end) {
			size_t len = *p >= 0x80 ? text_utf8_len(p, end) : 1;
			if (is_hidden(p, len))
				put_bytes_hex(f, p, len);
			else if (len > 1)
				fwrite(p, 1, len, f);
			else if (*p == '\'' || *p == '\\')
				fprintf(f, "\\%c", *p);
			else if (*p >= 0x20 && *p < 0x7f)
				fputc(*p, f);
			else
				fprintf(f, "\\x%02x", *p);
			p += len ? len : 1;
		}
		fputc('\'', f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* ------------------------------------------------------------------------
 * A standard output a terminal cannot be steered through
 * ---------------------------------------------------------------------- */

/* A byte held back from the last write: the first of a C1 control's two
 * UTF-8 bytes may end one buffer and the second begin the next. */
static int held = -1;

static bool write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDOUT_FILENO, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w, n -= (size_t)w;
	}
	return true;
}

/* Names, symbols and messages that gfp-report prints come from files anyone
 * may have written; an ESC or a C1 control among them would drive the
 * reader's terminal (retitle it, clear it, fake lines). They are written
 * as \xNN; newline, tab and every other UTF-8 character pass unchanged. */
static ssize_t visible_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	char out[4096 + 16];
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (held >= 0) {
			if (c >= 0x80 && c <= 0x9f)
				o += (size_t)snprintf(out + o, 16, "\\xc2\\x%02x", c);
			else
				out[o++] = (char)held, i--;
			held = -1;
		} else if (c == 0xc2) {
			held = c;
		} else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
			o += (size_t)snprintf(out + o, 16, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
		if (o >= 4096) {
			if (!write_all(out, o))
				return -1;
			o = 0;
		}
	}
	return write_all(out, o) ? (ssize_t)n : -1;
}

static int visible_close(void *cookie)
{
	(void)cookie;
	char c = (char)held;
	bool ok = held < 0 || write_all(&c, 1);
	held = -1;
	return ok ? 0 : -1;
}

void text_visible_stdout(void)
{
	cookie_io_functions_t io = {.write = visible_write, .close = visible_close};
	FILE *f = fopencookie(NULL, "w", io);
	if (f)
		stdout = f;
}
