/*
 * loss.c - a silent run's loss: where its output first left the recording
 * run's (the evidence), how (its shape: the first line lost and the one in
 * its place), and what it wrote to stderr that the plain runs did not; and
 * its key, by which two silent runs are one finding: the shape and the
 * lines' skeletons (their words and numbers alike), whatever data a failure
 * that came at another moment lost.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"
#include "text.h"
#include "sweep.h"

/* ------------------------------------------------------------------------
 * Evidence of a silent loss: where the outputs part
 * ---------------------------------------------------------------------- */

#define EV_BEFORE 40 /* bytes of a long line shown before the difference */

/* Appends s[from..to) to out[0..n) as one readable line: UTF-8 kept,
 * control bytes, malformed UTF-8 and backslashes quoted (\xNN, \\), the
 * controls above as \uNNNN, and "..." where the line is cut. */
static void quote_line(char *out, size_t n, const char *s, size_t from, size_t to)
{
	const unsigned char *p = (const unsigned char *)s + from,
	                    *end = (const unsigned char *)s + to;
	size_t len = strlen(out);
	while (p < end) {
		char piece[12];
		size_t k = *p >= 0x80 ? text_utf8_len(p, end) : 1;
		unsigned cp = k > 1 ? text_hidden_control(p, k) : 0;
		if (cp)
			snprintf(piece, sizeof(piece), "\\u%04x", cp);
		else if (k > 1)
			memcpy(piece, p, k), piece[k] = '\0';
		else if (*p == '\\')
			snprintf(piece, sizeof(piece), "\\\\");
		else if (*p < 0x20 || *p >= 0x7f)
			snprintf(piece, sizeof(piece), "\\x%02x", *p);
		else
			piece[0] = (char)*p, piece[1] = '\0';
		size_t pl = strlen(piece);
		if (len + pl + 4 > n) { /* room for "..." and the NUL */
			memcpy(out + len, "...", 4);
			return;
		}
		memcpy(out + len, piece, pl + 1);
		len += pl;
		p += k ? k : 1;
	}
}

/* One side's line at the difference: from the line's start (or EV_BEFORE
 * bytes before the difference, on a character's start: both sides are the
 * same up to there) to its end, the newline left out. */
static void side_line(char *out, size_t n, const struct output *o, size_t start, size_t at)
{
	out[0] = '\0';
	if (start >= o->len) {
		snprintf(out, n, "(end of output)");
		return;
	}
	if (at - start > EV_BEFORE) {
		start = at - EV_BEFORE;
		while (start < at && ((unsigned char)o->text[start] & 0xc0) == 0x80)
			start++;
		snprintf(out, n, "...");
	}
	const char *nl = memchr(o->text + start, '\n', o->len - start);
	quote_line(out, n, o->text, start, nl ? (size_t)(nl - o->text) : o->len);
}

/* Where out first differs from exp; ev->offset -1 when they are the same. */
void loss_evidence(const struct output *exp, const struct output *out, struct evidence *ev)
{
	size_t n = exp->len < out->len ? exp->len : out->len, at = 0;
	while (at < n && exp->text[at] == out->text[at])
		at++;
	ev->offset = -1;
	if (at == n && exp->len == out->len)
		return;
	size_t start = 0;
	ev->line = 1;
	for (size_t i = 0; i < at; i++)
		if (exp->text[i] == '\n')
			ev->line++, start = i + 1;
	ev->offset = (long long)at;
	ev->column = (long)(at - start) + 1;
	ev->expected_bytes = (long long)exp->len;
	ev->actual_bytes = (long long)out->len;
	side_line(ev->expected, sizeof(ev->expected), exp, start, at);
	side_line(ev->actual, sizeof(ev->actual), out, start, at);
}

/* ------------------------------------------------------------------------
 * The loss: its shape, the first line lost and the one in its place
 * ---------------------------------------------------------------------- */

/* The lines of o as offsets: line k is [at[k], at[k + 1]), its newline
 * included; n lines (a last one without a newline counts). */
static size_t lines_of(const struct output *o, size_t **at)
{
	size_t n = 0, cap = 16;
	size_t *a = xrealloc(NULL, cap * sizeof(*a));
	for (size_t i = 0; i < o->len;) {
		const char *nl = memchr(o->text + i, '\n', o->len - i);
		size_t end = nl ? (size_t)(nl - o->text) + 1 : o->len;
		if (n + 2 > cap)
			a = xrealloc(a, (cap *= 2) * sizeof(*a));
		a[n++] = i;
		i = end;
	}
	a[n] = o->len;
	*at = a;
	return n;
}

static bool same_line(const struct output *x, const size_t *xa, size_t i, const struct output *y,
                      const size_t *ya, size_t j)
{
	size_t lx = xa[i + 1] - xa[i], ly = ya[j + 1] - ya[j];
	return lx == ly && memcmp(x->text + xa[i], y->text + ya[j], lx) == 0;
}

/* Line k of o from byte `from` on, quoted, its newline left out. */
static void quoted_line(char *out, size_t n, const struct output *o, size_t from)
{
	out[0] = '\0';
	const char *nl = memchr(o->text + from, '\n', o->len - from);
	quote_line(out, n, o->text, from, nl ? (size_t)(nl - o->text) : o->len);
}

/* How out lost data against exp: trimmed of the lines both start and end
 * with, what is left of exp is lost, of out added in its place. */
void loss_shape(const struct output *exp, const struct output *out, struct loss *l)
{
	if (exp->len == out->len && memcmp(exp->text, out->text, out->len) == 0) {
		snprintf(l->shape, sizeof(l->shape), "same output");
		return;
	}
	/* A prefix cut inside a line ends early; one cut where a line starts
	 * lost the lines after it, as a line lost in the middle would. */
	if (!out->len || (out->len < exp->len && memcmp(exp->text, out->text, out->len) == 0 &&
	                  out->text[out->len - 1] != '\n')) {
		snprintf(l->shape, sizeof(l->shape), out->len ? "output ends early" : "no output");
		quoted_line(l->missing, sizeof(l->missing), exp, out->len);
		return;
	}
	size_t *ea, *oa;
	size_t ne = lines_of(exp, &ea), no = lines_of(out, &oa), p = 0, s = 0;
	while (p < ne && p < no && same_line(exp, ea, p, out, oa, p))
		p++;
	while (p + s < ne && p + s < no && same_line(exp, ea, ne - 1 - s, out, oa, no - 1 - s))
		s++;
	bool lost = p + s < ne, added = p + s < no;
	snprintf(l->shape, sizeof(l->shape), "%s",
	         lost && added ? "lines changed"
	         : lost        ? "lines lost"
	                       : "lines added");
	if (lost)
		quoted_line(l->missing, sizeof(l->missing), exp, ea[p]);
	if (added)
		quoted_line(l->added, sizeof(l->added), out, oa[p]);
	free(ea);
	free(oa);
}

/* ------------------------------------------------------------------------
 * The message: what a silent run wrote to stderr that the plain runs did not
 * ---------------------------------------------------------------------- */

#define MESSAGE_LINES 1000 /* of each stderr, the first looked at */

/* The lines of a run's stderr but the shim's own ("gfpshim: ...") and
 * blank ones, quoted (q), and with numbers made alike (a). */
struct err_lines {
	size_t n;
	char (*q)[200], (*a)[200];
};

static void err_lines(int idx, struct err_lines *e)
{
	char path[PATH_MAX + 16];
	size_t len = 0;
	run_paths(idx, "err", path, sizeof(path));
	char *err = infile_read(path, &len);
	for (size_t i = 0; err && i < len && e->n < MESSAGE_LINES;) {
		const char *nl = memchr(err + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - err) : len;
		if (end > i + strspn(err + i, " \t\r") && strncmp(err + i, "gfpshim: ", 9) != 0) {
			e->q = xrealloc(e->q, (e->n + 1) * sizeof(*e->q));
			e->a = xrealloc(e->a, (e->n + 1) * sizeof(*e->a));
			e->q[e->n][0] = '\0';
			quote_line(e->q[e->n], sizeof(e->q[0]), err, i, end);
			loss_alike(e->a[e->n], sizeof(e->a[0]), e->q[e->n]);
			e->n++;
		}
		i = end + 1;
	}
	free(err);
}

/* The first line of run idx's stderr that neither plain run (0 and -1,
 * recording.c) wrote, numbers made alike: a clock in a warning is no message. */
void loss_message(int idx, struct loss *l)
{
	struct err_lines run = {0}, plain = {0};
	err_lines(idx, &run);
	if (run.n) {
		err_lines(0, &plain);
		err_lines(-1, &plain);
	}
	for (size_t i = 0; i < run.n && !l->message[0]; i++) {
		size_t k = 0;
		while (k < plain.n && strcmp(plain.a[k], run.a[i]) != 0)
			k++;
		if (k == plain.n)
			snprintf(l->message, sizeof(l->message), "%s", run.q[i]);
	}
	free(run.q), free(run.a), free(plain.q), free(plain.a);
}

/* ------------------------------------------------------------------------
 * The key: what makes two silent runs one loss
 * ---------------------------------------------------------------------- */

/* s with each run of digits as "#" and each run of blanks as one space,
 * trimmed: a count or a column's width that depends on where the failure
 * came does not make another loss. */
void loss_alike(char *out, size_t n, const char *s)
{
	size_t len = 0;
	for (const char *p = s; *p && len + 2 < n;) {
		if (*p >= '0' && *p <= '9') {
			out[len++] = '#';
			p += strspn(p, "0123456789");
		} else if (*p == ' ' || *p == '\t') {
			if (len && p[strspn(p, " \t")])
				out[len++] = ' ';
			p += strspn(p, " \t");
		} else
			out[len++] = *p++;
	}
	out[len] = '\0';
}

static bool word_byte(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_' || c >= 0x80;
}

/* A line's skeleton: each word - a run of letters, digits, '_' and UTF-8
 * characters, joined by "-", ".", "'" or "/" - as "w", each run of blanks
 * as one space, the punctuation kept. Lines of one kind - a table's rows,
 * one message about other files - have one skeleton: which of them a
 * failure lost depends on when it came, not on what went wrong. */
static void skeleton(char *out, size_t n, const char *s)
{
	size_t len = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && len + 2 < n;) {
		bool word = false;
		while (word_byte(*p) || (word && strchr("-.'/", *p) && *p && word_byte(p[1])))
			p++, word = true;
		if (word) {
			out[len++] = 'w';
			continue;
		}
		if (*p == ' ' || *p == '\t') {
			p += strspn((const char *)p, " \t");
			if (len && *p)
				out[len++] = ' ';
			continue;
		}
		out[len++] = (char)*p++;
	}
	out[len] = '\0';
}

/* The silent key: "silent: SHAPE" with the skeletons of the first line lost
 * and of the one in its place, the exit status where it is not the plain
 * run's, the message with its numbers made alike. */
void loss_key(FILE *f, const struct run *r, bool display)
{
	const struct loss *l = &r->loss;
	char a[200], b[200];
	fprintf(f, "silent");
	if (l->message[0])
		fprintf(f, ", with a message");
	if (r->status != sweep.rec_status)
		fprintf(f, " (exit %d where the plain run exited %d)", r->status, sweep.rec_status);
	fprintf(f, ": %s", l->shape[0] ? l->shape : "output differs");
	/* What ends early or is missing whole depends on when the failure
	 * came: the shape alone is the loss. */
	bool lines = strcmp(l->shape, "lines lost") == 0 ||
	             strcmp(l->shape, "lines changed") == 0 || strcmp(l->shape, "lines added") == 0;
	if (lines && l->missing[0]) {
		skeleton(a, sizeof(a), l->missing);
		fprintf(f, ", \"%s\"", display ? l->missing : a);
	}
	if (lines && l->added[0]) {
		skeleton(b, sizeof(b), l->added);
		fprintf(f, "%s \"%s\"", l->missing[0] ? " became" : ",", display ? l->added : b);
	}
	if (l->message[0]) {
		loss_alike(a, sizeof(a), l->message);
		fprintf(f, "; stderr: \"%s\"", display ? l->message : a);
	}
}

/* ------------------------------------------------------------------------
 * As JSON: the --json report's and the journal's objects
 * ---------------------------------------------------------------------- */

void loss_evidence_json(FILE *f, const struct evidence *ev)
{
	if (ev->offset < 0) {
		fprintf(f, "null");
		return;
	}
	fprintf(f,
	        "{\"offset\":%lld,\"line\":%ld,\"column\":%ld,\"expected_bytes\":%lld,"
	        "\"actual_bytes\":%lld,\"expected\":",
	        ev->offset, ev->line, ev->column, ev->expected_bytes, ev->actual_bytes);
	text_json_str(f, ev->expected);
	fprintf(f, ",\"actual\":");
	text_json_str(f, ev->actual);
	fprintf(f, "}");
}

void loss_json(FILE *f, const struct loss *l)
{
	if (!l->shape[0]) {
		fprintf(f, "null");
		return;
	}
	fprintf(f, "{\"shape\":");
	text_json_str(f, l->shape);
	fprintf(f, ",\"missing\":");
	text_json_str(f, l->missing);
	fprintf(f, ",\"added\":");
	text_json_str(f, l->added);
	fprintf(f, ",\"message\":");
	text_json_str(f, l->message);
	fprintf(f, "}");
}
