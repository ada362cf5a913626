/* The tools' one JSON reader (tools/lib/json.c): values of every kind,
 * numbers kept as written, escapes and surrogate pairs decoded, where the
 * input stopped making sense, and json_write spelling what it read. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json.h"

static bool parse(const char *text, struct jval *v, char *err, size_t n)
{
	return json_parse(text, strlen(text), 1, v, err, n);
}

static char *rewritten(const struct jval *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_write(f, v);
	fclose(f);
	return buf ? buf : strdup("");
}

static void values_of_every_kind(void)
{
	struct jval v;
	char err[128];
	CHECK(parse(" {\"a\" : [1, -2.50e+3, true, false, null, \"x\"],\n\"b\":{}} ", &v, err,
	            sizeof(err)));
	CHECK(v.type == J_OBJ && v.n == 2);
	const struct jval *a = json_get(&v, "a");
	CHECK(a && a->type == J_ARR && a->n == 6);
	CHECK(a->v[0].type == J_NUM && strcmp(a->v[0].s, "1") == 0);
	CHECK(a->v[1].type == J_NUM && strcmp(a->v[1].s, "-2.50e+3") == 0);
	CHECK(a->v[2].type == J_BOOL && a->v[2].b);
	CHECK(a->v[3].type == J_BOOL && !a->v[3].b);
	CHECK(a->v[4].type == J_NULL);
	CHECK(a->v[5].type == J_STR && strcmp(a->v[5].s, "x") == 0);
	CHECK(json_get(&v, "b") && json_get(&v, "b")->type == J_OBJ);
	CHECK(!json_get(&v, "c"));
	CHECK(!json_str(&v, "a")); /* another type */
	char *out = rewritten(&v);
	CHECK_STR(out, "{\"a\":[1,-2.50e+3,true,false,null,\"x\"],\"b\":{}}");
	free(out);
	json_free(&v);
}

static void lookups_take_their_type(void)
{
	struct jval v;
	char err[128];
	CHECK(parse("{\"n\":18446744073709551615,\"s\":\"str\",\"t\":true,\"f\":\"true\"}", &v, err,
	            sizeof(err)));
	double d = 0;
	CHECK(json_num(&v, "n", &d) && d > 1.8e19);
	CHECK(!json_num(&v, "s", &d));
	CHECK_STR(json_str(&v, "s"), "str");
	CHECK(json_bool(&v, "t"));
	CHECK(!json_bool(&v, "f"));
	CHECK(!json_bool(&v, "missing"));
	/* numbers and strings as text, as written */
	CHECK_STR(json_text(json_get(&v, "n")), "18446744073709551615");
	CHECK_STR(json_text(json_get(&v, "s")), "str");
	CHECK(!json_get(NULL, "n"));
	json_free(&v);
}

static void escapes_decode(void)
{
	struct jval v;
	char err[128];
	CHECK(parse("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\u20ac \\ud83d\\ude00\"", &v, err,
	            sizeof(err)));
	CHECK(v.type == J_STR);
	CHECK_STR(v.s, "q\" b\\ s/ \b\f\n\r\t \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	json_free(&v);
	/* keys decode too, and compare decoded */
	CHECK(parse("{\"k\\u0065y\":1}", &v, err, sizeof(err)));
	CHECK(json_get(&v, "key"));
	json_free(&v);
}

static void equal_is_by_value(void)
{
	struct jval a, b, c;
	char err[128];
	CHECK(parse("{\"x\":[1,\"y\",{\"z\":null}]}", &a, err, sizeof(err)));
	CHECK(parse("{ \"x\" : [ 1 , \"y\" , { \"z\" : null } ] }", &b, err, sizeof(err)));
	CHECK(parse("{\"x\":[1,\"y\",{\"z\":false}]}", &c, err, sizeof(err)));
	CHECK(json_equal(&a, &b));
	CHECK(!json_equal(&a, &c));
	json_free(&a);
	json_free(&b);
	json_free(&c);
}

/* Where it stopped, relative to the line the caller says the text starts. */
static void errors_say_where(void)
{
	static const struct {
		const char *text;
		int line0;
		const char *where;
	} bad[] = {
	    {"{\"a\":1,}", 1, "line 1, column 8"},
	    {"[1,\n2,\n x]", 1, "line 3, column 2"},
	    {"{\"a\" 1}", 7, "line 7, column 6"},
	    {"\"open", 1, "line 1"},
	    {"[1] 2", 1, "line 1"},
	    {"", 1, "line 1"},
	    {"\"\\ud800\"", 1, "line 1"}, /* a lone surrogate */
	    {"\"a\x01\"", 1, "line 1"},   /* a raw control */
	    {"01", 1, "line 1"},
	    {"tru", 1, "line 1"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jval v;
		char err[128] = "";
		bool ok = json_parse(bad[i].text, strlen(bad[i].text), bad[i].line0, &v, err,
		                     sizeof(err));
		if (ok) {
			fprintf(stderr, "'%s' parsed\n", bad[i].text);
			check_failures++;
			json_free(&v);
		} else if (strncmp(err, bad[i].where, strlen(bad[i].where)) != 0) {
			fprintf(stderr, "'%s': '%s', not at %s\n", bad[i].text, err, bad[i].where);
			check_failures++;
		}
	}
}

/* Nesting has a bound (64 levels), so that a hostile file cannot run the
 * recursion off its stack. */
static void nesting_is_bounded(void)
{
	enum { DEPTH = 100000 };
	char *text = malloc(2 * DEPTH + 1);
	struct jval v;
	char err[128];
	for (size_t depth = 64; depth <= 65; depth++) {
		memset(text, '[', depth);
		memset(text + depth, ']', depth);
		bool ok = json_parse(text, 2 * depth, 1, &v, err, sizeof(err));
		CHECK(ok == (depth == 64));
		if (ok)
			json_free(&v);
		else
			CHECK(strstr(err, "less nesting") != NULL);
	}
	memset(text, '[', DEPTH);
	memset(text + DEPTH, ']', DEPTH);
	CHECK(!json_parse(text, 2 * DEPTH, 1, &v, err, sizeof(err)));
	free(text);
}

int main(void)
{
	values_of_every_kind();
	lookups_take_their_type();
	escapes_decode();
	equal_is_by_value();
	errors_say_where();
	nesting_is_bounded();
	return CHECK_DONE();
}
