/* The GFP_RULES parser (src/rules_parse.c): what each matcher becomes, the
 * flags after '=>', and the message, rule and column of every way a rule
 * can be wrong. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy.h"

static struct gfp_rule_set set;
static char err[512];

/* rules_parse's answer for text: 0 and an empty err, or -1 and a message
 * that contains want (a rule number and column, or what was expected). */
static void refused(const char *text, const char *want)
{
	err[0] = '\0';
	int r = rules_parse(&set, text, err, sizeof(err));
	CHECK(r == -1);
	if (!strstr(err, want)) {
		fprintf(stderr, "'%s': message '%s' lacks '%s'\n", text, err, want);
		CHECK(!"the message says what was expected");
	}
}

int main(void)
{
	/* The example of the manual. */
	CHECK(rules_parse(&set, "lib:libxml2.so* => NOFAIL|NOFS; sym:png_* & size>64K => NORETRY",
	                  err, sizeof(err)) == 0);
	CHECK(set.n == 2);
	CHECK(set.need_sym);
	CHECK(set.rule[0].nm == 1 && set.rule[0].m[0].kind == GFP_MATCH_LIB);
	CHECK_STR(set.rule[0].m[0].glob, "libxml2.so*");
	CHECK(set.rule[0].flags == context_normalize(GFP_NOFS | GFP_NOFAIL));
	CHECK(set.rule[0].on_path);
	CHECK(set.rule[1].nm == 2 && set.rule[1].m[0].kind == GFP_MATCH_SYM);
	CHECK_STR(set.rule[1].m[0].glob, "png_*");
	CHECK(set.rule[1].m[1].kind == GFP_MATCH_SIZE_GT && set.rule[1].m[1].size == 65536);
	CHECK(set.rule[1].flags == context_normalize(GFP_NORETRY));

	/* Threads and sizes alone are not on the path; no symbol is needed. */
	CHECK(rules_parse(&set, "  thread:worker-* & size<4K=>NOWAIT ;", err, sizeof(err)) == 0);
	CHECK(set.n == 1 && !set.need_sym && !set.rule[0].on_path);
	CHECK(set.rule[0].m[0].kind == GFP_MATCH_THREAD);
	CHECK_STR(set.rule[0].m[0].glob, "worker-*");
	CHECK(set.rule[0].m[1].kind == GFP_MATCH_SIZE_LT && set.rule[0].m[1].size == 4096);
	CHECK(set.rule[0].flags == context_normalize(GFP_NOWAIT));

	/* Spaces around '|' in the flags; sizes in bytes and with units. */
	CHECK(rules_parse(&set, "size>100 & size<1M => NOIO | RETRY_MAYFAIL", err, sizeof(err)) ==
	      0);
	CHECK(set.rule[0].m[0].size == 100 && set.rule[0].m[1].size == 1u << 20);
	CHECK(set.rule[0].flags == context_normalize(GFP_NOIO | GFP_RETRY_MAYFAIL));

	/* Nothing, or separators only: no rule, no error. */
	CHECK(rules_parse(&set, "", err, sizeof(err)) == 0 && set.n == 0);
	CHECK(rules_parse(&set, " ; ;\n; ", err, sizeof(err)) == 0 && set.n == 0);

	/* A line break after the flags ends a rule as ';' does (a rule a
	 * line, CRLF too); inside a rule it is only white space. */
	CHECK(rules_parse(
	          &set, "lib:a => NOFS\nsym:b & size>1K => NOIO|NORETRY\r\n thread:w* => NOWAIT\n",
	          err, sizeof(err)) == 0);
	CHECK(set.n == 3);
	CHECK(set.rule[0].nm == 1 && set.rule[0].flags == context_normalize(GFP_NOFS));
	CHECK(set.rule[1].nm == 2 && set.rule[1].m[1].size == 1024);
	CHECK(set.rule[1].flags == context_normalize(GFP_NOIO | GFP_NORETRY));
	CHECK(set.rule[2].m[0].kind == GFP_MATCH_THREAD);
	CHECK_STR(set.rule[2].m[0].glob, "w*");
	CHECK(rules_parse(&set, "lib:a &\n  size>1K\n  => NOFS\n\n;\n", err, sizeof(err)) == 0);
	CHECK(set.n == 1 && set.rule[0].nm == 2);
	CHECK(rules_parse(&set, "\n\r\n\n", err, sizeof(err)) == 0 && set.n == 0);
	CHECK(rules_parse(&set, "lib:x.so*\r\n=> NOFS\r\nsize<1K\r\n=> NOIO\r\n", err,
	                  sizeof(err)) == 0);
	CHECK(set.n == 2 && set.rule[1].m[0].size == 1024);
	CHECK_STR(set.rule[0].m[0].glob, "x.so*");
	refused("lib:a => NOFS\nlib: => NOIO", "rule 2");
	refused("lib:a => NOFS\n\x01lib:b => NOIO", "rule 2");
	refused("lib:a => NOFS\x1b[2J\nlib:b => NOIO", "a flag name");

	/* A parse starts afresh: the previous set's rules are gone. */
	CHECK(rules_parse(&set, "sym:a => NOFS", err, sizeof(err)) == 0 && set.n == 1);
	CHECK(rules_parse(&set, "lib:b => NOIO", err, sizeof(err)) == 0 && set.n == 1 &&
	      !set.need_sym);

	refused("lib: => NOFS", "a glob pattern");
	refused("lib: => NOFS", "rule 1, column 5");
	refused("file:x => NOFS", "a matcher: sym:GLOB");
	refused("lib:a NOFS", "'&' and another matcher, or '=>'");
	refused("lib:a => NOFS lib:b => NOIO", "a flag name");
	refused("lib:a =>", "flags after '=>'");
	refused("lib:a => ", "flags after '=>'");
	refused("lib:a => NOFS|BOGUS", "a flag name");
	refused("lib:a => NOFS|BOGUS", "column 15");
	refused("lib:a => NOFS|NOIO", "at most one base context");
	refused("size>12Q => NOFS", "a size");
	refused("size> => NOFS", "a size");
	refused("lib:a => NOFS lib:b => NOIO", "a flag name");
	refused("lib:a => NOFS; lib:b NOIO", "rule 2");

	/* Globs up to 127 characters. */
	char text[1024], glob[200];
	memset(glob, 'g', 127);
	glob[127] = '\0';
	snprintf(text, sizeof(text), "lib:%s => NOFS", glob);
	CHECK(rules_parse(&set, text, err, sizeof(err)) == 0);
	CHECK(strlen(set.rule[0].m[0].glob) == 127);
	memset(glob, 'g', 128);
	glob[128] = '\0';
	snprintf(text, sizeof(text), "lib:%s => NOFS", glob);
	refused(text, "a glob of at most 127 characters");

	/* Eight matchers in one rule, not nine. */
	CHECK(rules_parse(&set,
	                  "size>1 & size>2 & size>3 & size>4 & size>5 & size>6 & size>7 & "
	                  "size>8 => NOFS",
	                  err, sizeof(err)) == 0 &&
	      set.rule[0].nm == 8);
	refused("size>1 & size>2 & size>3 & size>4 & size>5 & size>6 & size>7 & size>8 & "
	        "size>9 => NOFS",
	        "at most 8 matchers");

	/* GFP_RULES_MAX rules, not one more. */
	size_t len = 0;
	for (int i = 0; i < GFP_RULES_MAX; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "lib:l%d => NOFS;", i);
	CHECK(rules_parse(&set, text, err, sizeof(err)) == 0 && set.n == GFP_RULES_MAX);
	snprintf(text + len, sizeof(text) - len, "lib:extra => NOFS");
	refused(text, "at most 32 rules");
	return CHECK_DONE();
}
