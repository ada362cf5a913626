/*
 * json.h - the one JSON reader of the tools, for what the shim and gfp-sweep
 * write (reports, records, sweep results). It takes any whitespace and key
 * order, keeps numbers as written (so that gfp-report merge copies them
 * exactly) and says where the input stopped making sense.
 */
#ifndef GFP_TOOLS_JSON_H
#define GFP_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	bool b;
	char *s;        /* J_STR decoded, J_NUM as written */
	size_t n;       /* J_ARR, J_OBJ: how many values */
	struct jval *v; /* J_ARR, J_OBJ: the values */
	char **k;       /* J_OBJ: k[i] names v[i] */
};

/* Exactly one value in text[0, len); on failure err gets "line L, column C:
 * expected X" relative to line0 (records are parsed a line at a time) and
 * *out is empty. Out of memory exits 2. */
bool json_parse(const char *text, size_t len, int line0, struct jval *out, char *err, size_t errn);
void json_free(struct jval *v);

/* Lookups; NULL or false when o is no object or the key has another type. */
const struct jval *json_get(const struct jval *o, const char *key);
const char *json_str(const struct jval *o, const char *key);
/* Numbers and strings as text, for tables and for comparing ids. */
const char *json_text(const struct jval *v);
bool json_num(const struct jval *o, const char *key, double *out);
/* Member `key` of object o is true (false when absent or not a boolean). */
bool json_bool(const struct jval *o, const char *key);
bool json_equal(const struct jval *a, const struct jval *b);
/* v as compact JSON, strings in text_json_str's spelling. */
void json_write(FILE *f, const struct jval *v);

#endif
