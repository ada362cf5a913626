/* The policy parser: every type, every error message the user sees. */
#include <string.h>

#include "check.h"
#include "policy.h"

static struct gfp_key key(enum gfp_key_type t, int64_t min, int64_t max, const char *choices)
{
	struct gfp_key k = {"test", t, "0", min, max, choices, "help", 0, GFP_ROLE_SHAPE};
	return k;
}

static int val(enum gfp_key_type t, const char *s, void *out)
{
	struct gfp_key k = key(t, 0, INT64_MAX, "off|totals|sites");
	const char *expect;
	return config_parse_value(&k, s, strlen(s), out, &expect);
}

static const char *parse(const char *text, bool file, struct gfp_policy *pol)
{
	static struct gfp_cfg_err err;
	memset(&err, 0, sizeof(err));
	config_defaults(pol);
	int n = config_parse(pol, file ? "GFP_POLICY_FILE p" : "GFP_POLICY", text, strlen(text), file,
			     NULL, &err);
	return n ? err.msg : NULL;
}

int main(void)
{
	uint64_t u;
	int64_t i;
	double d;
	bool b;
	unsigned e;
	gfp_t f;

	CHECK(val(GFP_T_SIZE, "4096", &u) == 0 && u == 4096);
	CHECK(val(GFP_T_SIZE, "64K", &u) == 0 && u == 65536);
	CHECK(val(GFP_T_SIZE, "16M", &u) == 0 && u == 16u << 20);
	CHECK(val(GFP_T_SIZE, "1GiB", &u) == 0 && u == 1u << 30);
	CHECK(val(GFP_T_SIZE, "1.5M", &u) == 0 && u == 3u << 19);
	CHECK(val(GFP_T_SIZE, "12Q", &u) != 0);
	CHECK(val(GFP_T_SIZE, "", &u) != 0);
	CHECK(val(GFP_T_SIZE, "99999999999999999999", &u) != 0);
	CHECK(val(GFP_T_SIZE, "1.5", &u) != 0);
	CHECK(val(GFP_T_MS, "20ms", &u) == 0 && u == 20);
	CHECK(val(GFP_T_MS, "2s", &u) == 0 && u == 2000);
	CHECK(val(GFP_T_MS, "0.5s", &u) == 0 && u == 500);
	CHECK(val(GFP_T_MS, "15", &u) == 0 && u == 15);
	CHECK(val(GFP_T_MS, "3h", &u) != 0);
	CHECK(val(GFP_T_PROB, "0.01", &d) == 0 && d > 0.0099 && d < 0.0101);
	CHECK(val(GFP_T_PROB, "1%", &d) == 0 && d > 0.0099 && d < 0.0101);
	CHECK(val(GFP_T_PROB, "1", &d) == 0 && d == 1.0);
	CHECK(val(GFP_T_PROB, "1.5", &d) != 0);
	CHECK(val(GFP_T_PROB, "-0.1", &d) != 0);
	CHECK(val(GFP_T_COUNT, "42", &i) == 0 && i == 42);
	CHECK(val(GFP_T_COUNT, "4.2", &i) != 0);
	CHECK(val(GFP_T_COUNT, "-1", &i) != 0); /* below min 0 */
	{
		struct gfp_key k = key(GFP_T_COUNT, -1, 100, "");
		const char *expect;
		CHECK(config_parse_value(&k, "-1", 2, &i, &expect) == 0 && i == -1);
		CHECK(config_parse_value(&k, "101", 3, &i, &expect) != 0);
	}
	CHECK(val(GFP_T_BOOL, "yes", &b) == 0 && b);
	CHECK(val(GFP_T_BOOL, "0", &b) == 0 && !b);
	CHECK(val(GFP_T_BOOL, "2", &b) != 0);
	CHECK(val(GFP_T_ENUM, "TOTALS", &e) == 0 && e == 1);
	CHECK(val(GFP_T_ENUM, "sites", &e) == 0 && e == 2);
	CHECK(val(GFP_T_ENUM, "site", &e) != 0);
	CHECK(val(GFP_T_FLAGS, "nofs|nofail", &f) == 0 && f == (GFP_NOFS | GFP_NOFAIL));
	CHECK(val(GFP_T_FLAGS, "NORETRY", &f) == 0 && f == (GFP_KERNEL | GFP_NORETRY));
	CHECK(val(GFP_T_FLAGS, "GFP_ATOMIC", &f) == 0 && f == GFP_ATOMIC);
	CHECK(val(GFP_T_FLAGS, "0xc40", &f) == 0 && f == GFP_NOFS);
	CHECK(val(GFP_T_FLAGS, "nofs|noio", &f) != 0); /* two base contexts */
	CHECK(val(GFP_T_FLAGS, "nofs|bogus", &f) != 0);

	struct gfp_policy pol;
	const char *m;
	CHECK(parse("stats=totals; confirm=1", false, &pol) == NULL);
	CHECK(pol.stats == 1 && pol.confirm && pol.set[GFP_K_stats]);
	CHECK(parse(" stats = totals ,, glibc_warn=0 ", false, &pol) == NULL);
	CHECK(pol.stats == 1 && !pol.glibc_warn);

	m = parse("stat=totals", false, &pol);
	CHECK(m && strstr(m, "GFP_POLICY: unknown key 'stat' (did you mean 'stats'?)"));
	m = parse("confrim=1", false, &pol);
	CHECK(m && strstr(m, "did you mean 'confirm'?"));
	m = parse("zzzzzzzz=1", false, &pol);
	CHECK(m && strstr(m, "unknown key 'zzzzzzzz'") && strstr(m, "--list-keys"));
	m = parse("stats=lots", false, &pol);
	CHECK(m && strstr(m, "bad value 'lots' for key 'stats'") && strstr(m, "off|totals"));
	m = parse("stats", false, &pol);
	CHECK(m && strstr(m, "not a key=value pair"));

	m = parse("# a comment\nstats=totals # trailing\n\nconfirm=1\n", true, &pol);
	CHECK(m == NULL && pol.stats == 1 && pol.confirm);
	m = parse("stats=totals\n\nconfirm=maybe\n", true, &pol);
	CHECK(m && strstr(m, "GFP_POLICY_FILE p:3: bad value 'maybe' for key 'confirm'"));

	/* Several errors are all counted; a value is never half-applied. */
	struct gfp_cfg_err err = {0};
	config_defaults(&pol);
	CHECK(config_parse(&pol, "GFP_POLICY", "a=1;b=2;stats=x", 15, false, NULL, &err) == 3);
	CHECK(pol.stats == 0 && !pol.set[GFP_K_stats]);

	CHECK(config_did_you_mean("glibcwarn", 9) != NULL);
	CHECK(config_did_you_mean("x", 1) == NULL);
	return CHECK_DONE();
}
