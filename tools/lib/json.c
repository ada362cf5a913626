/*
 * json.c - the tools' JSON reader (json.h) and its compact writer. It owns
 * parsing only: what a document means is for record_reader.c and the tools.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "json.h"
#include "text.h"

struct jparser {
	const char *p, *end;
	const char *err; /* what was expected; NULL while all is well */
	const char *at;  /* where it was expected */
	int depth;
};

#define JSON_MAX_DEPTH 64

static bool jfail(struct jparser *ps, const char *what)
{
	if (!ps->err) {
		ps->err = what;
		ps->at = ps->p;
	}
	return false;
}

static void jskip_ws(struct jparser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

void json_free(struct jval *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		json_free(&v->v[i]);
		if (v->k)
			free(v->k[i]);
	}
	free(v->v);
	free(v->k);
	free(v->s);
	memset(v, 0, sizeof(*v));
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool jhex4(struct jparser *ps, unsigned *out)
{
	if (ps->end - ps->p < 4)
		return jfail(ps, "four hex digits after \\u");
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(ps->p[i]);
		if (h < 0)
			return jfail(ps, "four hex digits after \\u");
		v = v << 4 | (unsigned)h;
	}
	ps->p += 4;
	*out = v;
	return true;
}

static size_t utf8_put(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static bool jstring(struct jparser *ps, char **out)
{
	ps->p++; /* the opening quote */
	/* The decoded text is never longer than the escaped one: size it from
	 * a first scan instead of from the rest of the file. */
	const char *q = ps->p;
	while (q < ps->end && *q != '"')
		q += *q == '\\' && q + 1 < ps->end ? 2 : 1;
	if (q >= ps->end)
		return jfail(ps, "a closing '\"' before the end of the input");
	char *buf = xrealloc(NULL, (size_t)(q - ps->p) + 1), *o = buf;
	while (*ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p;
		if (c < 0x20) {
			free(buf);
			return jfail(ps, "no control character inside a string");
		}
		if (c != '\\') {
			*o++ = (char)c;
			ps->p++;
			continue;
		}
		ps->p++;
		char e = *ps->p++;
		const char *simple = strchr("\"\\/bfnrt", e);
		if (e && simple) {
			static const char plain[] = "\"\\/\b\f\n\r\t";
			*o++ = plain[simple - "\"\\/bfnrt"];
			continue;
		}
		unsigned cp, lo;
		if (e != 'u' || !jhex4(ps, &cp)) {
			free(buf);
			return jfail(ps, "a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t "
			                 "\\uXXXX)");
		}
		if (cp >= 0xd800 && cp < 0xdc00) {
			if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
				free(buf);
				return jfail(ps, "a low surrogate after a high one");
			}
			ps->p += 2;
			if (!jhex4(ps, &lo) || lo < 0xdc00 || lo >= 0xe000) {
				free(buf);
				return jfail(ps, "a low surrogate after a high one");
			}
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		} else if ((cp >= 0xdc00 && cp < 0xe000) || cp == 0) {
			/* \u0000 would cut the C string short without a word. */
			free(buf);
			return jfail(ps, "a character other than \\u0000 or a lone low surrogate");
		}
		o += utf8_put(o, cp);
	}
	ps->p++;
	*o = '\0';
	*out = buf;
	return true;
}

static bool jdigits(struct jparser *ps)
{
	if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
		return false;
	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
		ps->p++;
	return true;
}

static bool jnumber(struct jparser *ps, char **out)
{
	const char *start = ps->p;
	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p < ps->end && *ps->p == '0')
		ps->p++;
	else if (!jdigits(ps))
		return jfail(ps, "a value (object, array, string, number, true, false or null)");
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if (!jdigits(ps))
			return jfail(ps, "digits after the decimal point");
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (!jdigits(ps))
			return jfail(ps, "digits in the exponent");
	}
	size_t n = (size_t)(ps->p - start);
	*out = memcpy(xrealloc(NULL, n + 1), start, n);
	(*out)[n] = '\0';
	return true;
}

static bool jliteral(struct jparser *ps, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, lit, n) != 0)
		return jfail(ps, "a value (object, array, string, number, true, false or null)");
	ps->p += n;
	return true;
}

static bool jvalue(struct jparser *ps, struct jval *out);

/* Arrays and objects: values are added only once complete, so on failure
 * json_free() of the container releases everything. */
static bool jcontainer(struct jparser *ps, struct jval *out, bool object)
{
	char close = object ? '}' : ']';
	size_t cap = 0;
	out->type = object ? J_OBJ : J_ARR;
	if (++ps->depth > JSON_MAX_DEPTH)
		return jfail(ps, "less nesting (64 levels at most)");
	ps->p++;
	jskip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return true;
	}
	for (;;) {
		char *key = NULL;
		jskip_ws(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"')
				goto bad_key;
			if (!jstring(ps, &key))
				goto fail;
			jskip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				jfail(ps, "':' after the key");
				goto fail;
			}
			ps->p++;
		}
		if (out->n == cap) {
			cap = cap ? cap * 2 : 8;
			out->v = xrealloc(out->v, cap * sizeof(*out->v));
			if (object)
				out->k = xrealloc(out->k, cap * sizeof(*out->k));
		}
		if (!jvalue(ps, &out->v[out->n])) {
			free(key);
			goto fail;
		}
		if (object)
			out->k[out->n] = key;
		out->n++;
		jskip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			ps->depth--;
			return true;
		}
		jfail(ps, object ? "',' or '}' in the object" : "',' or ']' in the array");
		goto fail;
	}
bad_key:
	jfail(ps, "a key in quotes");
fail:
	json_free(out);
	return false;
}

static bool jvalue(struct jparser *ps, struct jval *out)
{
	memset(out, 0, sizeof(*out));
	jskip_ws(ps);
	if (ps->p >= ps->end)
		return jfail(ps, "a value, not the end of the input");
	switch (*ps->p) {
	case '{':
		return jcontainer(ps, out, true);
	case '[':
		return jcontainer(ps, out, false);
	case '"':
		out->type = J_STR;
		return jstring(ps, &out->s);
	case 't':
		out->type = J_BOOL;
		out->b = true;
		return jliteral(ps, "true");
	case 'f':
		out->type = J_BOOL;
		return jliteral(ps, "false");
	case 'n':
		out->type = J_NULL;
		return jliteral(ps, "null");
	default:
		out->type = J_NUM;
		return jnumber(ps, &out->s);
	}
}

/* Exactly one value in text[0, len); on failure err gets "line L, column C:
 * expected X" relative to line0 (records are parsed a line at a time). */
bool json_parse(const char *text, size_t len, int line0, struct jval *out, char *err, size_t errn)
{
	struct jparser ps = {.p = text, .end = text + len};
	if (jvalue(&ps, out)) {
		jskip_ws(&ps);
		if (ps.p == ps.end)
			return true;
		json_free(out);
		jfail(&ps, "nothing after the first value");
	}
	int line = line0, col = 1;
	for (const char *c = text; c < ps.at; c++, col++)
		if (*c == '\n') {
			line++;
			col = 0;
		}
	snprintf(err, errn, "line %d, column %d: expected %s", line, col, ps.err);
	return false;
}

const struct jval *json_get(const struct jval *o, const char *key)
{
	if (!o || o->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->k[i], key) == 0)
			return &o->v[i];
	return NULL;
}

const char *json_str(const struct jval *o, const char *key)
{
	const struct jval *v = json_get(o, key);
	return v && v->type == J_STR ? v->s : NULL;
}

/* Numbers and strings as text, for tables and for comparing ids. */
const char *json_text(const struct jval *v)
{
	if (!v)
		return NULL;
	if (v->type == J_STR || v->type == J_NUM)
		return v->s;
	if (v->type == J_BOOL)
		return v->b ? "true" : "false";
	return v->type == J_NULL ? "null" : NULL;
}

bool json_num(const struct jval *o, const char *key, double *out)
{
	const struct jval *v = json_get(o, key);
	if (!v || v->type != J_NUM)
		return false;
	*out = strtod(v->s, NULL);
	return true;
}

bool json_bool(const struct jval *o, const char *key)
{
	const struct jval *v = json_get(o, key);
	return v && v->type == J_BOOL && v->b;
}

bool json_equal(const struct jval *a, const struct jval *b)
{
	if (a->type != b->type || a->n != b->n || a->b != b->b)
		return false;
	if ((a->s || b->s) && (!a->s || !b->s || strcmp(a->s, b->s) != 0))
		return false;
	for (size_t i = 0; i < a->n; i++)
		if ((a->k && strcmp(a->k[i], b->k[i]) != 0) || !json_equal(&a->v[i], &b->v[i]))
			return false;
	return true;
}

void json_write(FILE *f, const struct jval *v)
{
	switch (v->type) {
	case J_NULL:
		fputs("null", f);
		break;
	case J_BOOL:
		fputs(v->b ? "true" : "false", f);
		break;
	case J_NUM:
		fputs(v->s, f);
		break;
	case J_STR:
		text_json_str(f, v->s);
		break;
	case J_ARR:
	case J_OBJ:
		fputc(v->type == J_OBJ ? '{' : '[', f);
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				fputc(',', f);
			if (v->type == J_OBJ) {
				text_json_str(f, v->k[i]);
				fputc(':', f);
			}
			json_write(f, &v->v[i]);
		}
		fputc(v->type == J_OBJ ? '}' : ']', f);
		break;
	}
}
