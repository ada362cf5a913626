/*
 * gfp-report - print what the shim and gfp-sweep wrote, with frames named by
 * function and source line, and join the parts of a sharded sweep.
 *
 *   gfp-report [--path DIR]... FILE...
 *   gfp-report [--path DIR]... --allocinfo FILE [--top N]
 *   gfp-report merge [-o OUT] PART.json...
 *
 * A FILE is a GFP_REPORT (totals, entries, allocinfo, sites), a GFP_RECORD file (one
 * JSON event per line) or a gfp-sweep --json result; its kind is told from
 * its keys, not its name, because all three are usually called *.json.
 * Frames are recorded as module basename + offset from the module's start,
 * the same across ASLR and machines; libdwfl maps them back to functions and
 * lines when it finds the module and its debug information.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "symbolize.h"
#include "text.h"
#include "gfp_build.h"

#define EXIT_USAGE 2

static void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gfp-report: error: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "gfp-report: warning: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		error("out of memory");
		exit(EXIT_USAGE);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xrealloc(NULL, n), s, n);
}

/* ------------------------------------------------------------------------
 * JSON: a small reader for what the shim and gfp-sweep write. It takes any
 * whitespace and key order, keeps numbers as written (so a merge copies
 * them exactly) and says where the input stopped making sense.
 * ---------------------------------------------------------------------- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	bool b;
	char *s;	 /* J_STR decoded, J_NUM as written */
	size_t n;	 /* J_ARR, J_OBJ: how many values */
	struct jval *v;	 /* J_ARR, J_OBJ: the values */
	char **k;	 /* J_OBJ: k[i] names v[i] */
};

struct jparser {
	const char *p, *end;
	const char *err; /* what was expected; NULL while all is well */
	const char *at;	 /* where it was expected */
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

static void jfree(struct jval *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jfree(&v->v[i]);
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
 * jfree() of the container releases everything. */
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
	jfree(out);
	return false;
}

static bool jvalue(struct jparser *ps, struct jval *out)
{
	memset(out, 0, sizeof(*out));
	jskip_ws(ps);
	if (ps->p >= ps->end)
		return jfail(ps, "a value, not the end of the input");
	switch (*ps->p) {
	case '{': return jcontainer(ps, out, true);
	case '[': return jcontainer(ps, out, false);
	case '"': out->type = J_STR; return jstring(ps, &out->s);
	case 't': out->type = J_BOOL; out->b = true; return jliteral(ps, "true");
	case 'f': out->type = J_BOOL; return jliteral(ps, "false");
	case 'n': out->type = J_NULL; return jliteral(ps, "null");
	default: out->type = J_NUM; return jnumber(ps, &out->s);
	}
}

/* Exactly one value in text[0, len); on failure err gets "line L, column C:
 * expected X" relative to line0 (records are parsed a line at a time). */
static bool jparse(const char *text, size_t len, int line0, struct jval *out, char *err,
		   size_t errn)
{
	struct jparser ps = {.p = text, .end = text + len};
	if (jvalue(&ps, out)) {
		jskip_ws(&ps);
		if (ps.p == ps.end)
			return true;
		jfree(out);
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

static const struct jval *jget(const struct jval *o, const char *key)
{
	if (!o || o->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->k[i], key) == 0)
			return &o->v[i];
	return NULL;
}

static const char *jstr(const struct jval *o, const char *key)
{
	const struct jval *v = jget(o, key);
	return v && v->type == J_STR ? v->s : NULL;
}

/* Numbers and strings as text, for tables and for comparing ids. */
static const char *jtext(const struct jval *v)
{
	if (!v)
		return NULL;
	if (v->type == J_STR || v->type == J_NUM)
		return v->s;
	if (v->type == J_BOOL)
		return v->b ? "true" : "false";
	return v->type == J_NULL ? "null" : NULL;
}

static bool jnum(const struct jval *o, const char *key, double *out)
{
	const struct jval *v = jget(o, key);
	if (!v || v->type != J_NUM)
		return false;
	*out = strtod(v->s, NULL);
	return true;
}

static bool jequal(const struct jval *a, const struct jval *b)
{
	if (a->type != b->type || a->n != b->n || a->b != b->b)
		return false;
	if ((a->s || b->s) && (!a->s || !b->s || strcmp(a->s, b->s) != 0))
		return false;
	for (size_t i = 0; i < a->n; i++)
		if ((a->k && strcmp(a->k[i], b->k[i]) != 0) || !jequal(&a->v[i], &b->v[i]))
			return false;
	return true;
}

static void jwrite(FILE *f, const struct jval *v)
{
	switch (v->type) {
	case J_NULL: fputs("null", f); break;
	case J_BOOL: fputs(v->b ? "true" : "false", f); break;
	case J_NUM: fputs(v->s, f); break;
	case J_STR: text_json_str(f, v->s); break;
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
			jwrite(f, &v->v[i]);
		}
		fputc(v->type == J_OBJ ? '}' : ']', f);
		break;
	}
}

/* ------------------------------------------------------------------------
 * Finding modules for symbolize.c: a recorded basename is looked for in the
 * directories below.
 * ---------------------------------------------------------------------- */

/* Where to look for a module by its basename, in order. */
static const char **dirs;
static size_t ndirs;
static const char **user_dirs;
static size_t nuser_dirs;

/* Names already reported as not found: one note per module, not per frame. */
static char **noted;
static size_t nnoted;


static void add_dir(const char *d)
{
	for (size_t i = 0; i < ndirs; i++)
		if (strcmp(dirs[i], d) == 0)
			return;
	dirs = xrealloc(dirs, (ndirs + 1) * sizeof(*dirs));
	dirs[ndirs++] = xstrdup(d);
}

static void clear_dirs(void)
{
	for (size_t i = 0; i < ndirs; i++)
		free((char *)dirs[i]);
	free(dirs);
	dirs = NULL;
	ndirs = 0;
}

/* The directory of PROG as it would be run (a bare name goes through PATH). */
static void add_program_dir(const char *prog)
{
	char path[PATH_MAX];
	if (!prog || !*prog || !tool_resolve(prog, path, sizeof(path)))
		return;
	char *slash = strrchr(path, '/');
	if (slash == path)
		add_dir("/");
	else if (slash) {
		*slash = '\0';
		add_dir(path);
	}
}

/* --path first (the user knows best), then the file's programs, then the
 * usual places; the directory of libgfpshim.so too, for the shim's frames. */
static void set_dirs(const char *prog)
{
	static const char *const defaults[] = {".", "/lib/x86_64-linux-gnu",
					       "/usr/lib/x86_64-linux-gnu", "/usr/bin", "/bin"};
	clear_dirs();
	for (size_t i = 0; i < nuser_dirs; i++)
		add_dir(user_dirs[i]);
	add_program_dir(prog);
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		add_dir(defaults[i]);
	char found[PATH_MAX], lib[PATH_MAX];
	if (tool_find_library(found, sizeof(found)) && realpath(found, lib)) {
		char *slash = strrchr(lib, '/');
		if (slash && slash != lib) {
			*slash = '\0';
			add_dir(lib);
		}
	}
}

static struct sym_module *find_module(const char *name)
{
	/* A recorded basename; anything else is not a module we can look up. */
	if (!*name || strchr(name, '/') || strcmp(name, "?") == 0 || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return NULL;
	for (size_t i = 0; i < ndirs; i++) {
		char path[PATH_MAX];
		struct stat st;
		int w = snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		if (w > 0 && (size_t)w < sizeof(path) && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode))
			return sym_open(path, name);
	}
	for (size_t i = 0; i < nnoted; i++)
		if (strcmp(noted[i], name) == 0)
			return NULL;
	noted = xrealloc(noted, (nnoted + 1) * sizeof(*noted));
	noted[nnoted++] = xstrdup(name);
	fprintf(stderr, "gfp-report: note: %s not found (looked in", name);
	for (size_t i = 0; i < ndirs; i++)
		fprintf(stderr, " %s", dirs[i]);
	fprintf(stderr, "); --path DIR names its directory\n");
	return NULL;
}

/* One frame as "    DESC (module+offset)" or "    module+offset". Return
 * addresses point after the call, possibly to the next line's code, so those
 * are looked up one byte back; the top of a crash is the faulting pc itself. */
static void print_frame(const char *module, const char *offset, const char *symbol,
			bool return_address)
{
	char buf[1024];
	size_t len = 0;
	buf[0] = '\0';
	char *end = NULL;
	errno = 0;
	unsigned long long off = strtoull(offset, &end, 0);
	struct sym_module *m = NULL;
	if (end != offset && !*end && errno == 0)
		m = find_module(module);
	if (m && !sym_chain(m, off, return_address, buf, sizeof(buf), &len) && !(symbol && *symbol))
		sym_name(m, off, return_address, buf, sizeof(buf), &len);
	if (!len && symbol && *symbol)
		len = (size_t)snprintf(buf, sizeof(buf), "%s", symbol);
	if (len)
		printf("    %s (%s+%s)\n", buf, module, offset);
	else
		printf("    %s+%s\n", module, offset);
}

/* Frames as a record holds them: [{"module","offset","symbol"}, ...]. */
static void print_frames_json(const struct jval *frames, bool top_is_pc)
{
	if (!frames || frames->type != J_ARR)
		return;
	for (size_t i = 0; i < frames->n; i++) {
		const struct jval *f = &frames->v[i];
		const char *mod = jstr(f, "module"), *off = jstr(f, "offset");
		const char *sym = jstr(f, "symbol");
		if (!mod || !off) {
			printf("    (a frame without module and offset)\n");
			continue;
		}
		print_frame(mod, off, sym, !(top_is_pc && i == 0));
	}
}

/* Frames as gfp-sweep's groups hold them, lines "    sym+off (module+off)",
 * taken apart for fn: mod is NULL for a line that is no frame (sym is the
 * line then); first says whether it is the first frame. fn returns false to
 * stop. */
typedef bool frame_text_fn(void *ctx, const char *sym, const char *mod, const char *off,
			   bool first);

static void each_frame_text(const char *frames, frame_text_fn *fn, void *ctx)
{
	bool first = true;
	for (const char *line = frames; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line = nl ? nl + 1 : line + len;
		char *s = buf + strspn(buf, " \t");
		size_t sl = strlen(s);
		char *open = strrchr(s, '(');
		/* The last '+' splits, for modules such as libstdc++.so.6. */
		char *plus = open ? strrchr(open, '+') : NULL;
		if (!sl || s[sl - 1] != ')' || !plus) {
			if (*s && !fn(ctx, s, NULL, NULL, first))
				return;
			continue;
		}
		s[sl - 1] = '\0';
		*plus = '\0';
		*open = '\0';
		char *sym_end = open;
		while (sym_end > s && sym_end[-1] == ' ')
			*--sym_end = '\0';
		if (!fn(ctx, s, open + 1, plus + 1, first))
			return;
		first = false;
	}
}

static bool print_frame_text(void *ctx, const char *sym, const char *mod, const char *off,
			     bool first)
{
	bool top_is_pc = *(const bool *)ctx;
	if (mod)
		print_frame(mod, off, sym, !(top_is_pc && first));
	else
		printf("    %s\n", sym);
	return true;
}

static void print_frames_text(const char *frames, bool top_is_pc)
{
	each_frame_text(frames, print_frame_text, &top_is_pc);
}

/* ------------------------------------------------------------------------
 * GFP_REPORT: a table of entry points, and with stats=paths one of call
 * paths (the sites gfp-sweep fails, site.depth frames deep)
 * ---------------------------------------------------------------------- */

struct row {
	const char *name;
	const struct jval *obj;
	double key;
	size_t order;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Columns are every scalar field the rows have, in the order first seen, so
 * that fields a newer shim adds show up without a change here. */
static void print_table(const char *first, struct row *rows, size_t nrows, const char *sort_key,
			const struct jval *total, const char *skip)
{
	const char *cols[32];
	size_t ncols = 0, width[33];
	width[0] = strlen(first);
	for (size_t r = 0; r < nrows; r++) {
		size_t l = strlen(rows[r].name);
		if (l > width[0])
			width[0] = l;
		const struct jval *o = rows[r].obj;
		for (size_t i = 0; o && o->type == J_OBJ && i < o->n; i++) {
			if (!jtext(&o->v[i]) || (skip && strcmp(o->k[i], skip) == 0))
				continue;
			size_t c = 0;
			while (c < ncols && strcmp(cols[c], o->k[i]) != 0)
				c++;
			if (c == ncols) {
				if (ncols == sizeof(cols) / sizeof(cols[0]))
					continue;
				cols[ncols] = o->k[i];
				width[++ncols] = strlen(o->k[i]);
			}
		}
	}
	for (size_t r = 0; r < nrows; r++)
		rows[r].key = jnum(rows[r].obj, sort_key, &rows[r].key) ? rows[r].key : -1;
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	for (size_t c = 0; c < ncols; c++)
		for (size_t r = 0; r <= nrows; r++) {
			const struct jval *o = r < nrows ? rows[r].obj : total;
			const char *v = jtext(jget(o, cols[c]));
			if (v && strlen(v) > width[c + 1])
				width[c + 1] = strlen(v);
		}
	printf("  %-*s", (int)width[0], first);
	for (size_t c = 0; c < ncols; c++)
		printf("  %*s", (int)width[c + 1], cols[c]);
	printf("\n");
	for (size_t r = 0; r <= nrows; r++) {
		const struct jval *o = r < nrows ? rows[r].obj : total;
		if (r == nrows && !total)
			break;
		printf("  %-*s", (int)width[0], r < nrows ? rows[r].name : "(total)");
		for (size_t c = 0; c < ncols; c++) {
			const char *v = jtext(jget(o, cols[c]));
			printf("  %*s", (int)width[c + 1], v ? v : "-");
		}
		printf("\n");
	}
}

static void print_report(const char *path, const struct jval *rep)
{
	const struct jval *policy = jget(rep, "policy");
	const char *stats = jstr(policy, "stats");
	const char *pid = jtext(jget(rep, "pid"));
	printf("%s: GFP_REPORT of pid %s (gfpshim %s), stats=%s\n", path, pid ? pid : "?",
	       jstr(rep, "gfpshim") ? jstr(rep, "gfpshim") : "?", stats ? stats : "?");
	const struct jval *entries = jget(rep, "entries");
	const struct jval *totals = jget(rep, "totals");
	size_t n = entries && entries->type == J_OBJ ? entries->n : 0;
	struct row *rows = xrealloc(NULL, (n + 1) * sizeof(*rows));
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct row){entries->k[i], &entries->v[i], 0, i};
	printf("\nentry points by calls:\n");
	if (n || totals)
		print_table("entry", rows, n, "calls", totals, NULL);
	else
		printf("  (none recorded)\n");
	free(rows);

	const struct jval *ai = jget(rep, "allocinfo");
	if (ai && ai->type == J_ARR)
		printf("\n%zu allocation sites with statistics: gfp-report --allocinfo %s prints "
		       "them\n",
		       ai->n, path);
	const struct jval *sites = jget(rep, "sites");
	if (!sites || sites->type != J_ARR)
		return;
	const char *elig = jtext(jget(rep, "eligible_calls"));
	printf("\ncall paths by hits (%zu paths, %s eligible calls):\n", sites->n,
	       elig ? elig : "?");
	rows = xrealloc(NULL, (sites->n + 1) * sizeof(*rows));
	size_t nrows = 0;
	for (size_t i = 0; i < sites->n; i++) {
		const char *id = jstr(&sites->v[i], "site");
		if (id)
			rows[nrows++] = (struct row){id, &sites->v[i], 0, i};
	}
	bool by_hits = sites->n && jget(&sites->v[0], "hits");
	print_table("site", rows, nrows, by_hits ? "hits" : "calls", NULL, "site");
	/* A future shim may name each site's frames: show them too. */
	for (size_t r = 0; r < nrows; r++)
		if (jget(rows[r].obj, "frames")) {
			printf("  %s:\n", rows[r].name);
			print_frames_json(jget(rows[r].obj, "frames"), false);
		}
	free(rows);
	double overflow = 0;
	if (jnum(rep, "sites_overflow", &overflow) && overflow > 0)
		printf("  (%s calls came from sites past the end of the shim's site table)\n",
		       jtext(jget(rep, "sites_overflow")));
}

/* ------------------------------------------------------------------------
 * Records: one block per event, its fields on one line, then its frames
 * ---------------------------------------------------------------------- */

static void print_record(const struct jval *r)
{
	const char *ev = jstr(r, "event");
	printf("%s", ev);
	for (size_t i = 0; i < r->n; i++) {
		const char *v = jtext(&r->v[i]);
		if (v && strcmp(r->k[i], "event") != 0)
			printf(" %s %s", r->k[i], *v ? v : "\"\"");
	}
	printf("\n");
	/* Only a crash record starts at the interrupted instruction; every
	 * other record starts at the return address into malloc's caller. */
	print_frames_json(jget(r, "frames"), strcmp(ev, "crash") == 0);
}

/* ------------------------------------------------------------------------
 * gfp-sweep results
 * ---------------------------------------------------------------------- */

struct site_match {
	const char *site; /* "module+offset symbol" */
	bool printed;
};

static bool print_if_site(void *ctx, const char *sym, const char *mod, const char *off,
			  bool first)
{
	struct site_match *m = ctx;
	size_t ml = mod ? strlen(mod) : 0, ol = off ? strlen(off) : 0;
	if (!mod || strncmp(m->site, mod, ml) || m->site[ml] != '+' ||
	    strncmp(m->site + ml + 1, off, ol) || (m->site[ml + 1 + ol] && m->site[ml + 1 + ol] != ' '))
		return true;
	print_frame(mod, off, sym, !first);
	m->printed = true;
	return false;
}

/* A crash group's crash site as its backtrace prints it: the faulting pc
 * when it is the top frame, else a return address. */
static void print_crash_site(const char *site, const char *frames)
{
	struct site_match m = {site, false};
	each_frame_text(frames, print_if_site, &m);
	if (!m.printed)
		printf("    %s\n", site);
}

static void print_group_site(size_t g, void *groups)
{
	const struct jval *o = &((const struct jval *)groups)->v[g];
	print_crash_site(jstr(o, "crash_site"), jstr(o, "crash_frames"));
}

static void crash_sites_digest(const struct jval *groups, size_t ng)
{
	const char **top = xrealloc(NULL, (ng ? ng : 1) * sizeof(*top));
	double *runs = xrealloc(NULL, (ng ? ng : 1) * sizeof(*runs));
	for (size_t g = 0; g < ng; g++) {
		const struct jval *o = &groups->v[g];
		const char *oc = jstr(o, "outcome");
		double count;
		top[g] = oc && strcmp(oc, "crash") == 0 ? jstr(o, "crash_site") : NULL;
		runs[g] = jnum(o, "count", &count) ? count : 0;
	}
	tool_crash_sites_digest(ng, top, runs, print_group_site, (void *)groups);
	free(top);
	free(runs);
}

static void print_sweep(const char *path, const struct jval *sw)
{
	const struct jval *prog = jget(sw, "program");
	printf("%s: gfp-sweep %s, %s mode, shard %s:", path,
	       jstr(sw, "gfp_sweep") ? jstr(sw, "gfp_sweep") : "?",
	       jstr(sw, "mode") ? jstr(sw, "mode") : "?",
	       jstr(sw, "shard") ? jstr(sw, "shard") : "?");
	for (size_t i = 0; prog && prog->type == J_ARR && i < prog->n; i++)
		if (jtext(&prog->v[i])) {
			putchar(' ');
			text_shell_quote(stdout, jtext(&prog->v[i]));
		}
	const char *elig = jtext(jget(sw, "eligible_calls"));
	const char *sites = jtext(jget(sw, "sites")), *runs = jtext(jget(sw, "runs"));
	printf("\n  %s eligible calls at %s call sites; %s run%s\n", elig ? elig : "?",
	       sites ? sites : "?", runs ? runs : "?", runs && !strcmp(runs, "1") ? "" : "s");
	const struct jval *out = jget(sw, "outcomes");
	printf("outcomes:");
	bool any = false;
	for (size_t i = 0; out && out->type == J_OBJ && i < out->n; i++)
		if (jtext(&out->v[i]) && strcmp(jtext(&out->v[i]), "0") != 0) {
			printf(" %s %s", out->k[i], jtext(&out->v[i]));
			any = true;
		}
	printf("%s\n", any ? "" : " none");
	const struct jval *results = jget(sw, "results");

	const struct jval *groups = jget(sw, "groups");
	size_t ng = groups && groups->type == J_ARR ? groups->n : 0;
	for (size_t g = 0; g < ng; g++) {
		const struct jval *gr = &groups->v[g];
		const char *oc = jstr(gr, "outcome"), *site = jstr(gr, "site");
		const char *count = jtext(jget(gr, "count"));
		double sig = 0;
		printf("\n[%zu] %s", g + 1, oc ? oc : "?");
		if (jnum(gr, "signal", &sig) && sig > 0 && sig < 65)
			printf(" (signal %d %s)", (int)sig, strsignal((int)sig));
		printf(" in %s run%s: allocation failure at site %s", count ? count : "?",
		       count && strcmp(count, "1") == 0 ? "" : "s", site && *site ? site : "-");
		/* Its first run's failure point, as gfp-sweep printed it. */
		double first = -1;
		const struct jval *r0 =
		    jnum(gr, "first_run", &first) && results && results->type == J_ARR &&
		            first >= 0 && first < (double)results->n
		        ? &results->v[(size_t)first]
		        : NULL;
		const char *hit = r0 ? jtext(jget(r0, "hit")) : NULL, *rsite = r0 ? jstr(r0, "site") : NULL;
		if (hit)
			printf(", %s %s", rsite && *rsite ? "hit" : "call", hit);
		printf("\n");
		const char *inj = jstr(gr, "injection_frames"), *crash = jstr(gr, "crash_frames");
		printf("  the failed allocation:\n");
		if (inj && *inj)
			print_frames_text(inj, false);
		else
			printf("    (no injection record)\n");
		if (crash && *crash) {
			printf("  the crash:\n");
			print_frames_text(crash, true);
		}
		const struct jval *conf = jget(gr, "confirmed");
		const char *pol = jstr(gr, "policy"), *repro = jstr(gr, "reproducer");
		printf("  reproduce (%s): ",
		       conf && conf->type == J_BOOL && conf->b ? "confirmed" : "NOT reproduced");
		if (repro) { /* as the sweep printed it, with the environment it needs */
			printf("%s\n", repro);
			continue;
		}
		printf("gfp-run --policy ");
		text_shell_quote(stdout, pol ? pol : "");
		printf(" --");
		for (size_t i = 0; prog && prog->type == J_ARR && i < prog->n; i++)
			if (jtext(&prog->v[i])) {
				putchar(' ');
				text_shell_quote(stdout, jtext(&prog->v[i]));
			}
		printf("\n");
	}
	if (!ng)
		printf("no crash, hang or silent data loss behind any failure point\n");
	crash_sites_digest(groups, ng);
}

/* ------------------------------------------------------------------------
 * Reading a file and telling its kind
 * ---------------------------------------------------------------------- */

enum kind { K_NONE, K_REPORT, K_SWEEP, K_RECORD };

static enum kind kind_of(const struct jval *v)
{
	if (!v || v->type != J_OBJ)
		return K_NONE;
	if (jget(v, "gfp_sweep"))
		return K_SWEEP;
	if (jget(v, "event"))
		return K_RECORD;
	if (jget(v, "entries") || jget(v, "totals"))
		return K_REPORT;
	return K_NONE;
}

static const char what_kinds[] = "a GFP_REPORT (\"totals\", \"entries\"), a GFP_RECORD file "
				 "(lines with \"event\") or a gfp-sweep --json result "
				 "(\"gfp_sweep\")";

/* Records are one object per line: each is read alone, so a line cut short
 * by a killed process spoils only itself. */
static bool show_records(const char *path, const char *text, size_t len)
{
	bool ok = true, any = false;
	int lineno = 0;
	for (const char *line = text; line < text + len;) {
		const char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t l = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		lineno++;
		if (strspn(line, " \t\r") < l) {
			struct jval v;
			char err[256];
			if (!jparse(line, l, lineno, &v, err, sizeof(err))) {
				error("%s: %s", path, err);
				ok = false;
			} else if (kind_of(&v) != K_RECORD || !jstr(&v, "event")) {
				error("%s: line %d is not a record (no \"event\")", path, lineno);
				ok = false;
			} else {
				if (!any)
					printf("%s: records\n", path);
				printf("\n");
				print_record(&v);
				any = true;
			}
			jfree(&v);
		}
		line = nl ? nl + 1 : text + len;
	}
	return ok;
}

static bool show_file(const char *path)
{
	size_t len = 0;
	char *text = text_slurp(path, &len);
	if (!text) {
		error("cannot read %s: %s", path, strerror(errno));
		return false;
	}
	bool ok = true;
	struct jval v;
	char err[256];
	if (strspn(text, " \t\r\n") == len) {
		error("%s is empty: expected %s", path, what_kinds);
		ok = false;
	} else if (jparse(text, len, 1, &v, err, sizeof(err))) {
		enum kind k = kind_of(&v);
		const struct jval *prog = jget(&v, "program");
		set_dirs(prog && prog->type == J_ARR && prog->n ? jtext(&prog->v[0]) : NULL);
		if (k == K_REPORT)
			print_report(path, &v);
		else if (k == K_SWEEP)
			print_sweep(path, &v);
		else if (k == K_RECORD)
			ok = show_records(path, text, len);
		else {
			error("%s: JSON, but not %s", path, what_kinds);
			ok = false;
		}
		jfree(&v);
	} else {
		/* Not one JSON value: a records file if its first line is a record. */
		const char *first = text + strspn(text, " \t\r\n");
		const char *nl = strchr(first, '\n');
		struct jval f;
		char ferr[256];
		bool rec = false;
		if (jparse(first, nl ? (size_t)(nl - first) : strlen(first), 1, &f, ferr,
			   sizeof(ferr))) {
			rec = kind_of(&f) == K_RECORD;
			jfree(&f);
		}
		set_dirs(NULL);
		if (rec)
			ok = show_records(path, text, len);
		else {
			error("%s: not JSON (%s); expected %s", path, err, what_kinds);
			ok = false;
		}
	}
	free(text);
	fflush(stdout);
	return ok;
}

/* ------------------------------------------------------------------------
 * --allocinfo: a report's allocation sites (stats=sites) in the layout of
 * /proc/allocinfo, format 1.0 (kernel-semantics.md §10): a version line, a
 * header, then per site its live bytes, live calls and "file:line [module]
 * func:name", by live bytes
 * ---------------------------------------------------------------------- */

/* The allocation's own line and the function it is written in, inlined or
 * not, as the kernel's codetag names the place alloc_hooks() expands. */
struct site_row {
	const struct jval *obj;
	const char *module, *offset, *symbol;
	long long live_bytes;
	unsigned long long live_calls;
	size_t order;
};

static int site_row_cmp(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool integer(const struct jval *v, bool is_signed, long long *s, unsigned long long *u)
{
	if (!v || v->type != J_NUM)
		return false;
	char *end = NULL;
	errno = 0;
	if (is_signed)
		*s = strtoll(v->s, &end, 10);
	else
		*u = v->s[0] == '-' ? 0 : strtoull(v->s, &end, 10);
	return end && end != v->s && !*end && errno == 0;
}

/* One site: "file:line [module] func:name" where the module's line table
 * knows the return address (looked up one byte back, in the call), else
 * "module+offset [module] func:name" with the symbol table's or the
 * recorded name. */
static void print_site_row(const struct site_row *r)
{
	char buf[1024];
	size_t len = 0;
	buf[0] = '\0';
	char *end = NULL;
	errno = 0;
	unsigned long long off = strtoull(r->offset, &end, 0);
	struct sym_module *m = NULL;
	if (end != r->offset && !*end && errno == 0)
		m = find_module(r->module);
	char name[256] = "?";
	size_t nlen = 0;
	if (m && !sym_tag(m, off, true, r->module, buf, sizeof(buf), &len) &&
	    sym_name(m, off, true, name, sizeof(name), &nlen))
		name[strcspn(name, "+")] = '\0';
	else if (!len && r->symbol && *r->symbol)
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(r->symbol, "+"), r->symbol);
	if (!len)
		snprintf(buf, sizeof(buf), "%s+%s [%s] func:%s", r->module, r->offset, r->module,
			 name);
	/* The kernel ends each line with a space, too. */
	printf("%12lli %8llu %s \n", r->live_bytes, r->live_calls, buf);
}

static bool print_allocinfo(const char *path, const struct jval *ai, long top)
{
	struct site_row *rows = xrealloc(NULL, (ai->n + 1) * sizeof(*rows));
	for (size_t i = 0; i < ai->n; i++) {
		const struct jval *o = &ai->v[i];
		struct site_row *r = &rows[i];
		*r = (struct site_row){
		    o, jstr(o, "module"), jstr(o, "offset"), jstr(o, "symbol"), 0, 0, i};
		unsigned long long unused = 0;
		long long unused_s = 0;
		if (!r->module || !r->offset ||
		    !integer(jget(o, "live_bytes"), true, &r->live_bytes, &unused) ||
		    !integer(jget(o, "live_calls"), false, &unused_s, &r->live_calls)) {
			error("%s: allocinfo row %zu lacks \"module\", \"offset\" or an integer "
			      "\"live_bytes\" and \"live_calls\"",
			      path, i + 1);
			free(rows);
			return false;
		}
	}
	qsort(rows, ai->n, sizeof(*rows), site_row_cmp);
	printf("allocinfo - version: 1.0\n");
	printf("#     <size>  <calls> <tag info>\n");
	size_t n = top > 0 && (size_t)top < ai->n ? (size_t)top : ai->n;
	for (size_t i = 0; i < n; i++)
		print_site_row(&rows[i]);
	free(rows);
	return true;
}

static bool show_allocinfo(const char *path, long top)
{
	size_t len = 0;
	char *text = text_slurp(path, &len);
	if (!text) {
		error("cannot read %s: %s", path, strerror(errno));
		return false;
	}
	struct jval v;
	char err[256];
	if (!jparse(text, len, 1, &v, err, sizeof(err))) {
		error("%s: not JSON (%s); --allocinfo reads a GFP_REPORT written with stats=sites",
		      path, err);
		free(text);
		return false;
	}
	bool ok = false;
	const struct jval *ai = jget(&v, "allocinfo");
	if (kind_of(&v) != K_REPORT) {
		error("%s is not a GFP_REPORT (\"totals\", \"entries\"); --allocinfo reads the "
		      "report of a stats=sites run",
		      path);
	} else if (!ai || ai->type != J_ARR) {
		const char *stats = jstr(jget(&v, "policy"), "stats");
		error("%s has no \"allocinfo\": the process ran with stats=%s; per-site "
		      "statistics need stats=sites (GFP_POLICY=stats=sites)",
		      path, stats ? stats : "?");
	} else {
		set_dirs(NULL);
		ok = print_allocinfo(path, ai, top);
	}
	jfree(&v);
	free(text);
	fflush(stdout);
	return ok;
}

/* ------------------------------------------------------------------------
 * merge: the shards of one sweep back into the result of one run
 * ---------------------------------------------------------------------- */

struct part {
	const char *path;
	struct jval v;
	const struct jval *results, *groups;
	long k, n;
};

struct mgroup {
	const struct jval *g; /* the representative: its first run comes first */
	size_t rank;	      /* where that run is in the merged results */
	size_t seen;	      /* tie-break: the order groups were read in */
	double count;
};

struct ranked {
	const struct jval *r;
	size_t part, index;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	const char *sx = jstr(x->r, "site"), *sy = jstr(y->r, "site");
	int c = strcmp(sx ? sx : "", sy ? sy : "");
	if (c)
		return c;
	double hx = 0, hy = 0;
	jnum(x->r, "hit", &hx);
	jnum(y->r, "hit", &hy);
	if (hx != hy)
		return hx < hy ? -1 : 1;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int mgroup_cmp(const void *a, const void *b)
{
	const struct mgroup *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seen < y->seen ? -1 : x->seen > y->seen;
}

static bool same_str(const struct jval *a, const struct jval *b, const char *key)
{
	const char *x = jstr(a, key), *y = jstr(b, key);
	return strcmp(x ? x : "", y ? y : "") == 0;
}

/* A group's first run (gfp-sweep's "first_run"): its index in the part's
 * results, SIZE_MAX if the group has none that is valid. */
static size_t group_first_run(const struct part *p, const struct jval *g)
{
	double first;
	if (!jnum(g, "first_run", &first) || first < 0 || first >= (double)p->results->n ||
	    first != (double)(size_t)first)
		return SIZE_MAX;
	return (size_t)first;
}

static bool load_part(struct part *p)
{
	size_t len = 0;
	char *text = text_slurp(p->path, &len);
	char err[256];
	if (!text) {
		error("cannot read %s: %s", p->path, strerror(errno));
		return false;
	}
	bool ok = jparse(text, len, 1, &p->v, err, sizeof(err));
	free(text);
	if (!ok) {
		error("%s: not JSON (%s)", p->path, err);
		return false;
	}
	if (kind_of(&p->v) != K_SWEEP) {
		error("%s: not a gfp-sweep --json result (no \"gfp_sweep\"): only those merge",
		      p->path);
		return false;
	}
	const char *shard = jstr(&p->v, "shard");
	char extra;
	p->results = jget(&p->v, "results");
	p->groups = jget(&p->v, "groups");
	const char *missing = !jstr(&p->v, "mode")			       ? "mode"
			      : !jget(&p->v, "program")			       ? "program"
			      : !p->results || p->results->type != J_ARR ? "results"
			      : !p->groups || p->groups->type != J_ARR   ? "groups"
			      : !shard					       ? "shard"
									       : NULL;
	if (missing) {
		error("%s: no \"%s\" in this gfp-sweep result", p->path, missing);
		return false;
	}
	if (sscanf(shard, "%ld/%ld%c", &p->k, &p->n, &extra) != 2 || p->n < 1 || p->k < 1 ||
	    p->k > p->n) {
		error("%s: shard is \"%s\", not K/N", p->path, shard);
		return false;
	}
	for (size_t i = 0; i < p->results->n; i++)
		if (!jstr(&p->results->v[i], "site") || !jstr(&p->results->v[i], "outcome") ||
		    !jget(&p->results->v[i], "hit")) {
			error("%s: result %zu has no site, hit or outcome", p->path, i + 1);
			return false;
		}
	return true;
}

/* Every part must come from the same sweep, each shard exactly once. */
static bool check_parts(struct part *parts, size_t np)
{
	const struct part *a = &parts[0];
	for (size_t i = 1; i < np; i++) {
		const struct part *b = &parts[i];
		if (strcmp(jstr(&a->v, "mode"), jstr(&b->v, "mode")) != 0) {
			error("%s is a %s-mode sweep but %s is %s-mode: parts of different sweeps "
			      "do not merge",
			      b->path, jstr(&b->v, "mode"), a->path, jstr(&a->v, "mode"));
			return false;
		}
		if (!jequal(jget(&a->v, "program"), jget(&b->v, "program"))) {
			error("%s swept a different program or arguments than %s: parts of "
			      "different sweeps do not merge",
			      b->path, a->path);
			return false;
		}
		if (b->n != a->n) {
			error("%s is shard %ld/%ld but %s is shard %ld/%ld: every part must come "
			      "from the same --shard K/N split",
			      b->path, b->k, b->n, a->path, a->k, a->n);
			return false;
		}
		for (size_t j = 0; j < i; j++)
			if (parts[j].k == b->k) {
				error("%s and %s are both shard %ld/%ld: each shard once",
				      parts[j].path, b->path, b->k, b->n);
				return false;
			}
		static const char *const same[] = {"eligible_calls", "sites"};
		for (size_t s = 0; s < 2; s++) {
			const char *x = jtext(jget(&a->v, same[s]));
			const char *y = jtext(jget(&b->v, same[s]));
			if (x && y && strcmp(x, y) != 0)
				warning("%s recorded %s %s, %s %s: the program does not "
					"allocate the same way every run, so the shards may not "
					"add up to one sweep",
					a->path, same[s], x, b->path, y);
		}
	}
	if ((long)np != a->n) {
		for (long k = 1; k <= a->n; k++) {
			size_t j = 0;
			while (j < np && parts[j].k != k)
				j++;
			if (j == np) {
				error("shard %ld/%ld is missing: the parts are not the whole "
				      "sweep",
				      k, a->n);
				return false;
			}
		}
	}
	return true;
}

static void write_merged(FILE *f, struct part *parts, const struct jval **results,
			 size_t total, struct mgroup *groups, size_t ngroups)
{
	/* Outcome names in the parts' order, then any only the results use. */
	const struct jval *oc0 = jget(&parts[0].v, "outcomes");
	size_t nout = 0;
	const char **names = xrealloc(NULL, ((oc0 ? oc0->n : 0) + total) * sizeof(*names));
	size_t *counts = xrealloc(NULL, ((oc0 ? oc0->n : 0) + total) * sizeof(*counts));
	for (size_t i = 0; oc0 && oc0->type == J_OBJ && i < oc0->n; i++) {
		names[nout] = oc0->k[i];
		counts[nout++] = 0;
	}
	for (size_t i = 0; i < total; i++) {
		const char *o = jstr(results[i], "outcome");
		size_t j = 0;
		while (j < nout && strcmp(names[j], o) != 0)
			j++;
		if (j == nout) {
			names[nout] = o;
			counts[nout++] = 0;
		}
		counts[j]++;
	}

	/* The first part's layout, with the fields that describe the whole. */
	const struct jval *top = &parts[0].v;
	fputc('{', f);
	for (size_t i = 0; i < top->n; i++) {
		const char *k = top->k[i];
		if (i)
			fputc(',', f);
		text_json_str(f, k);
		fputc(':', f);
		if (strcmp(k, "shard") == 0)
			text_json_str(f, "1/1");
		else if (strcmp(k, "runs") == 0)
			fprintf(f, "%zu", total);
		else if (strcmp(k, "outcomes") == 0) {
			fputc('{', f);
			for (size_t j = 0; j < nout; j++) {
				fprintf(f, "%s", j ? "," : "");
				text_json_str(f, names[j]);
				fprintf(f, ":%zu", counts[j]);
			}
			fputc('}', f);
		} else if (strcmp(k, "results") == 0) {
			fputc('[', f);
			for (size_t j = 0; j < total; j++) {
				if (j)
					fputc(',', f);
				jwrite(f, results[j]);
			}
			fputc(']', f);
		} else if (strcmp(k, "groups") == 0) {
			fputc('[', f);
			for (size_t g = 0; g < ngroups; g++) {
				const struct jval *gr = groups[g].g;
				fputs(g ? ",{" : "{", f);
				for (size_t m = 0; m < gr->n; m++) {
					if (m)
						fputc(',', f);
					text_json_str(f, gr->k[m]);
					fputc(':', f);
					if (strcmp(gr->k[m], "count") == 0)
						fprintf(f, "%.0f", groups[g].count);
					else if (strcmp(gr->k[m], "first_run") == 0 &&
						 groups[g].rank != SIZE_MAX)
						fprintf(f, "%zu", groups[g].rank);
					else
						jwrite(f, &gr->v[m]);
				}
				fputc('}', f);
			}
			fputc(']', f);
		} else
			jwrite(f, &top->v[i]);
	}
	fputs("}\n", f);
	free(names);
	free(counts);
}

static int merge_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *output = NULL;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'h':
			printf("usage: gfp-report merge [-o OUT.json] PART.json...\n"
			       "Joins the --json results of gfp-sweep --shard 1/N ... N/N into the "
			       "result one\nunsharded sweep gives (shard \"1/1\").\n");
			return 0;
		case ':':
			error("merge: %s needs an argument", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			error("merge: unknown option '%s' (see gfp-report merge --help)",
			      argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		error("merge: no parts given (usage: gfp-report merge [-o OUT] PART.json...)");
		return EXIT_USAGE;
	}
	size_t np = (size_t)(argc - optind);
	struct part *parts = xrealloc(NULL, np * sizeof(*parts));
	memset(parts, 0, np * sizeof(*parts));
	int status = 0;
	for (size_t i = 0; i < np; i++) {
		parts[i].path = argv[optind + (int)i];
		if (!load_part(&parts[i])) {
			status = EXIT_USAGE;
			np = i + 1;
			goto out;
		}
	}
	if (!check_parts(parts, np)) {
		status = EXIT_USAGE;
		goto out;
	}

	/* Shard K/N kept the runs K-1, K-1+N, ... of the one plan, so dealing
	 * them back round-robin restores the unsharded order exactly. */
	size_t total = 0;
	for (size_t i = 0; i < np; i++)
		total += parts[i].results->n;
	const struct jval **results = xrealloc(NULL, (total + 1) * sizeof(*results));
	size_t **pos = xrealloc(NULL, np * sizeof(*pos));
	bool dealt = true;
	memset(results, 0, (total + 1) * sizeof(*results));
	for (size_t i = 0; i < np; i++) {
		pos[i] = xrealloc(NULL, (parts[i].results->n + 1) * sizeof(**pos));
		for (size_t j = 0; j < parts[i].results->n; j++) {
			size_t at = (size_t)(parts[i].k - 1) + j * (size_t)parts[i].n;
			pos[i][j] = at;
			if (at < total)
				results[at] = &parts[i].results->v[j];
			else
				dealt = false;
		}
	}
	if (!dealt) {
		/* The shards planned differently (their recording runs differed):
		 * the best order left is by site, then hit. */
		warning("the shards' run counts do not fit one --shard split of %zu runs; "
			"results are ordered by site, then hit",
			total);
		struct ranked *rk = xrealloc(NULL, (total + 1) * sizeof(*rk));
		size_t t = 0;
		for (size_t i = 0; i < np; i++)
			for (size_t j = 0; j < parts[i].results->n; j++)
				rk[t++] = (struct ranked){&parts[i].results->v[j], i, j};
		qsort(rk, total, sizeof(*rk), ranked_cmp);
		for (t = 0; t < total; t++) {
			results[t] = rk[t].r;
			pos[rk[t].part][rk[t].index] = t;
		}
		free(rk);
	}

	/* Groups with the same injection site, outcome and crash site are one
	 * group: counts add up, and the one whose first run comes first speaks
	 * for it, as in an unsharded sweep. */
	size_t ng = 0, seen = 0;
	for (size_t i = 0; i < np; i++)
		ng += parts[i].groups->n;
	struct mgroup *groups = xrealloc(NULL, (ng + 1) * sizeof(*groups));
	ng = 0;
	for (size_t i = 0; i < np; i++) {
		for (size_t j = 0; j < parts[i].groups->n; j++, seen++) {
			const struct jval *g = &parts[i].groups->v[j];
			size_t first = group_first_run(&parts[i], g);
			size_t rank = first == SIZE_MAX ? SIZE_MAX : pos[i][first];
			double count = 0;
			jnum(g, "count", &count);
			size_t m = 0;
			while (m < ng && !(same_str(groups[m].g, g, "site") &&
					   same_str(groups[m].g, g, "outcome") &&
					   same_str(groups[m].g, g, "crash_site")))
				m++;
			if (m == ng) {
				groups[ng++] = (struct mgroup){g, rank, seen, count};
				continue;
			}
			groups[m].count += count;
			if (rank < groups[m].rank) {
				groups[m].g = g;
				groups[m].rank = rank;
			}
		}
	}
	qsort(groups, ng, sizeof(*groups), mgroup_cmp);

	FILE *f = output ? fopen(output, "w") : stdout;
	if (!f) {
		error("cannot write %s: %s", output, strerror(errno));
		status = EXIT_USAGE;
	} else {
		write_merged(f, parts, results, total, groups, ng);
		if (fflush(f) != 0 || ferror(f) || (output && fclose(f) != 0)) {
			error("cannot write %s: %s", output ? output : "the standard output",
			      strerror(errno));
			status = EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < np; i++)
		free(pos[i]);
	free(pos);
	free(results);
	free(groups);
out:
	for (size_t i = 0; i < np; i++)
		jfree(&parts[i].v);
	free(parts);
	return status;
}

/* ------------------------------------------------------------------------
 * main
 * ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: gfp-report [--path DIR]... FILE...\n"
	        "       gfp-report [--path DIR]... --allocinfo FILE [--top N]\n"
	        "       gfp-report merge [-o OUT.json] PART.json...\n"
	        "Prints a GFP_REPORT file (entry points, call sites), a GFP_RECORD file (one\n"
	        "block per event) or a gfp-sweep --json result (outcomes, findings and their\n"
	        "reproducers), with frames named 'function file:line' where the module and its\n"
	        "debug information are found: in each --path DIR, then the directory of the\n"
	        "swept program, '.', /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /usr/bin\n"
	        "and /bin.\n"
	        "--allocinfo prints the call sites of a GFP_REPORT written with stats=sites in\n"
	        "the layout of /proc/allocinfo, by live bytes; --top N only the first N.\n"
	        "merge joins the parts of gfp-sweep --shard K/N into the result of one run\n"
	        "(a file named 'merge' is ./merge).\n"
	        "Exit status: 0 ok, 2 usage errors or unreadable input.\n");
}

int main(int argc, char **argv)
{
	/* A report must not wait on the network: debug information comes from
	 * this machine only, never from a debuginfod server. */
	unsetenv("DEBUGINFOD_URLS");
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return merge_main(argc - 1, argv + 1);

	static const struct option opts[] = {
	    {"path", required_argument, NULL, 'p'}, {"allocinfo", required_argument, NULL, 'a'},
	    {"top", required_argument, NULL, 't'},  {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},    {NULL, 0, NULL, 0},
	};
	int c;
	const char *allocinfo = NULL;
	long top = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (allocinfo) {
				error("--allocinfo takes one FILE (given '%s' and '%s')", allocinfo,
				      optarg);
				return EXIT_USAGE;
			}
			allocinfo = optarg;
			break;
		case 't': {
			char *end = NULL;
			errno = 0;
			top = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || top < 1) {
				error("--top %s: expected a number of rows, 1 or more", optarg);
				return EXIT_USAGE;
			}
			break;
		}
		case 'p': {
			struct stat st;
			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode)) {
				error("--path %s: not a directory", optarg);
				return EXIT_USAGE;
			}
			user_dirs = xrealloc(user_dirs, (nuser_dirs + 1) * sizeof(*user_dirs));
			user_dirs[nuser_dirs++] = optarg;
			break;
		}
		case 'h': usage(stdout); return 0;
		case 'V': printf("gfp-report %s\n", GFP_VERSION); return 0;
		case ':':
			error("%s needs an argument (see gfp-report --help)", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			error("unknown option '%s' (see gfp-report --help)", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (top && !allocinfo) {
		error("--top goes with --allocinfo FILE (see gfp-report --help)");
		return EXIT_USAGE;
	}
	if (allocinfo && optind < argc) {
		error("--allocinfo takes one FILE; '%s' is another (see gfp-report --help)",
		      argv[optind]);
		return EXIT_USAGE;
	}
	if (!allocinfo && optind >= argc) {
		error("no FILE given (usage: gfp-report [--path DIR]... FILE..., or --help)");
		return EXIT_USAGE;
	}
	int status = 0;
	if (allocinfo && !show_allocinfo(allocinfo, top))
		status = EXIT_USAGE;
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			printf("\n");
		if (!show_file(argv[i]))
			status = EXIT_USAGE;
	}
	sym_close_all();
	for (size_t i = 0; i < nnoted; i++)
		free(noted[i]);
	free(noted);
	clear_dirs();
	free(user_dirs);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		error("cannot write the standard output: %s", strerror(errno));
		return EXIT_USAGE;
	}
	return status;
}
