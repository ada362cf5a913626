/*
 * rules_parse.c - the GFP_RULES parser: text into a rule set.
 *
 *   GFP_RULES='lib:libxml2.so* => NOFAIL|NOFS; sym:png_* & size>64K => NORETRY'
 *
 * Part of the policy library, so that gfp-run checks --rules with the shim's
 * own messages without linking the engine. Matching the rules against a
 * request stays in rules.c. Never allocates: the shim parses before main.
 */
#include <string.h>

#include "policy.h"

/* ------------------------------------------------------------------------
 * Parsing
 * ---------------------------------------------------------------------- */

struct parser {
	struct gfp_rule_set *set;
	const char *s, *p;
	int rule; /* 1-based, for messages */
	char *err;
	size_t errlen;
};

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int fail(struct parser *ps, const char *expected)
{
	int col = (int)(ps->p - ps->s) + 1;
	char at[12 * 4 + 1];
	gfp_quote(at, sizeof(at), ps->p, strnlen(ps->p, 12));
	gfp_snprintf(ps->err, ps->errlen,
	             "GFP_RULES: rule %d, column %d (at '%s'): expected %s (e.g. "
	             "'lib:libfoo.so* & size>64K => NORETRY; sym:png_* => NOFAIL')",
	             ps->rule, col, *ps->p ? at : "the end", expected);
	return -1;
}

static bool starts(const char *p, const char *w)
{
	return strncmp(p, w, strlen(w)) == 0;
}

/* A glob or a size runs to the next '&', '=>' or ';', or to white space
 * (a line break, CRLF's too, among it). */
static bool token_ends(const char *p)
{
	return !*p || *p == '&' || *p == ';' || *p == ' ' || *p == '\t' || *p == '\n' ||
	       *p == '\r' || starts(p, "=>");
}

static int parse_glob(struct parser *ps, char *out)
{
	const char *b = ps->p;
	while (!token_ends(ps->p))
		ps->p++;
	size_t n = (size_t)(ps->p - b);
	if (n == 0)
		return fail(ps, "a glob pattern");
	if (n >= GFP_RULE_GLOB_MAX)
		return ps->p = b, fail(ps, "a glob of at most 127 characters");
	memcpy(out, b, n);
	out[n] = '\0';
	return 0;
}

static int parse_size(struct parser *ps, uint64_t *out)
{
	static const struct gfp_key size_key = {
	    .name = "size", .type = GFP_T_SIZE, .max = INT64_MAX};
	const char *b = ps->p;
	while (!token_ends(ps->p))
		ps->p++;
	const char *expect;
	if (ps->p == b || config_parse_value(&size_key, b, (size_t)(ps->p - b), out, &expect))
		return ps->p = b, fail(ps, "a size (bytes, or with K, M, G)");
	return 0;
}

static int parse_matcher(struct parser *ps, struct gfp_rule *r)
{
	if (r->nm == (int)(sizeof(r->m) / sizeof(r->m[0])))
		return fail(ps, "at most 8 matchers in one rule");
	struct gfp_matcher *m = &r->m[r->nm];
	if (starts(ps->p, "sym:")) {
		ps->p += 4;
		m->kind = GFP_MATCH_SYM;
		ps->set->need_sym = r->on_path = true;
		if (parse_glob(ps, m->glob))
			return -1;
	} else if (starts(ps->p, "lib:")) {
		ps->p += 4;
		m->kind = GFP_MATCH_LIB;
		r->on_path = true;
		if (parse_glob(ps, m->glob))
			return -1;
	} else if (starts(ps->p, "thread:")) {
		ps->p += 7;
		m->kind = GFP_MATCH_THREAD;
		if (parse_glob(ps, m->glob))
			return -1;
	} else if (starts(ps->p, "size>") || starts(ps->p, "size<")) {
		m->kind = ps->p[4] == '>' ? GFP_MATCH_SIZE_GT : GFP_MATCH_SIZE_LT;
		ps->p += 5;
		if (parse_size(ps, &m->size))
			return -1;
	} else {
		return fail(ps, "a matcher: sym:GLOB, lib:GLOB, thread:GLOB, size>N or size<N");
	}
	r->nm++;
	return 0;
}

static int parse_rule(struct parser *ps, struct gfp_rule *r)
{
	for (;;) {
		skip_ws(ps);
		if (parse_matcher(ps, r))
			return -1;
		skip_ws(ps);
		if (*ps->p == '&') {
			ps->p++;
			continue;
		}
		if (starts(ps->p, "=>"))
			break;
		return fail(ps, "'&' and another matcher, or '=>' and the flags");
	}
	ps->p += 2;
	skip_ws(ps);
	/* The flags run to the end of the rule, spaced around '|' as in
	 * GFP_POLICY's default= if the writer likes. */
	const char *b = ps->p, *e;
	while (*ps->p && *ps->p != ';' && *ps->p != '\n')
		ps->p++;
	for (e = ps->p; e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'); e--)
		;
	const char *bad;
	size_t badlen;
	if (e == b)
		return fail(ps, "flags after '=>' (e.g. NORETRY, NOFAIL|NOFS)");
	int rc = gfp_flags_parse(b, (size_t)(e - b), &r->flags, &bad, &badlen);
	if (rc == -1)
		return ps->p = bad,
		       fail(ps, "a flag name (KERNEL, NOFS, NOIO, NOWAIT, ATOMIC, NORETRY, "
		                "RETRY_MAYFAIL, NOFAIL, NOWARN, HIGH, ...)");
	if (rc == -2)
		return ps->p = b,
		       fail(ps, "at most one base context (KERNEL, NOFS, NOIO, NOWAIT, ATOMIC)");
	r->flags = context_normalize(r->flags);
	/* Not past a line break: after the flags it ends the rule, as ';'
	 * does, so that rules can be written a line each. */
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r')
		ps->p++;
	return 0;
}

int rules_parse(struct gfp_rule_set *set, const char *text, char *err, size_t errlen)
{
	struct parser ps = {
	    .set = set, .s = text, .p = text, .rule = 1, .err = err, .errlen = errlen};
	set->n = 0;
	set->need_sym = false;
	for (;;) {
		skip_ws(&ps);
		while (*ps.p == ';') {
			ps.p++;
			skip_ws(&ps);
		}
		if (!*ps.p)
			break;
		if (set->n == GFP_RULES_MAX)
			return fail(&ps, "at most 32 rules");
		struct gfp_rule *r = &set->rule[set->n];
		memset(r, 0, sizeof(*r));
		if (parse_rule(&ps, r))
			return -1;
		set->n++; /* parse_rule stopped at ';', a line break or the end */
		ps.rule++;
	}
	return 0;
}
