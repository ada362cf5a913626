/*
 * Every policy the key table allows, one or two keys at a time (each key at
 * every choice or a bound of its type) and three at a time (each at its
 * first and last value), with and without GFP_RULES, with and without
 * GFP_RECORD: routed by what it means (meaning_of). The invariants are
 * stated in the keys' ROLE column, not in meaning.c's terms:
 *   a key that counts never gets a route that does not count;
 *   a key that injects never lets an allocation bypass injection;
 *   a key that fills never lets an allocation bypass the fill;
 *   a budget never misses a free (its free route can switch to the shim);
 *   a key that shapes failures never gets the direct route;
 *   ctl=1 and a thread's reserve keep every route the shim's;
 *   speaking keys alone get the direct route, and every family is chosen
 *   by some policy (so the checks above are not vacuous).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "meaning.h"

#define VALUES 8

static const char *kind_name[ROUTE_KINDS] = {"shim",    "direct",   "watched",
                                             "counted", "profiled", "budget"};
static int chosen[ROUTE_KINDS];
static int policies;
static bool records; /* GFP_RECORD is on */

/* The values key k is tried at: every choice or a bound of its type. */
static int values_of(const struct gfp_key *k, char out[VALUES][64])
{
	int n = 0;
	switch (k->type) {
	case GFP_T_BOOL:
		snprintf(out[n++], 64, "0");
		snprintf(out[n++], 64, "1");
		break;
	case GFP_T_ENUM:
		for (const char *c = k->choices; *c && n < VALUES;) {
			size_t len = strcspn(c, "|");
			snprintf(out[n++], 64, "%.*s", (int)len, c);
			c += len + (c[len] == '|');
		}
		break;
	case GFP_T_COUNT:
		snprintf(out[n++], 64, "%" PRId64, k->min);
		snprintf(out[n++], 64, "%" PRId64, k->max);
		if (*k->choices)
			snprintf(out[n++], 64, "%s", k->choices); /* the word for 0 */
		break;
	case GFP_T_SIZE:
		snprintf(out[n++], 64, "1M");
		snprintf(out[n++], 64, "16G");
		break;
	case GFP_T_MS:
		snprintf(out[n++], 64, "0");
		snprintf(out[n++], 64, "1s");
		break;
	case GFP_T_PROB:
		snprintf(out[n++], 64, "0.5");
		break;
	case GFP_T_FLAGS:
		snprintf(out[n++], 64, "NOFS");
		snprintf(out[n++], 64, "ATOMIC|NOWARN");
		break;
	case GFP_T_STR:
		snprintf(out[n++], 64, k->max == GFP_STR_HEX ? "00000000deadbeef" : "x*");
		break;
	}
	return n;
}

static struct gfp_policy pol;

static bool set_as(enum gfp_key_role role)
{
	for (size_t i = 0; i < GFP_KEY_COUNT; i++)
		if (pol.set[i] && gfp_keys[i].role == role)
			return true;
	return false;
}

#define EXPECT(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "policy '%s'%s%s: alloc=%s free=%s: ", text,               \
			        rules ? " with rules" : "", records ? " with records" : "",        \
			        kind_name[c.alloc], kind_name[c.free]);                            \
			CHECK(cond);                                                               \
		}                                                                                  \
	} while (0)

static void route_policy(const char *text, bool rules)
{
	struct gfp_cfg_err err = {0};
	config_defaults(&pol);
	if (config_parse(&pol, "test", text, strlen(text), false, NULL, &err) != 0)
		return; /* not a value the table allows */
	size_t drop;
	if (config_contradiction(&pol, &drop))
		return; /* init_ensure refuses it */
	/* Where jemalloc's own functions were not found every route is the
	 * shim's: route as if they were, to check the choice itself. */
	struct gfp_facts f = {.rules = rules, .records = records, .je_own = true};
	struct route_choice c = meaning_of(&pol, &f).route;
	policies++;
	chosen[c.alloc]++;
	chosen[c.free]++;

	const struct gfp_policy *p = &pol;
	bool injects = set_as(GFP_ROLE_INJECT) &&
	               (p->fail_probability > 0 || p->fail_nth > 0 || p->fail_site.v[0]);
	bool shapes =
	    rules || set_as(GFP_ROLE_SHAPE) || set_as(GFP_ROLE_BUDGET) || set_as(GFP_ROLE_RESERVE);
	if (set_as(GFP_ROLE_CONTROL) && p->ctl)
		EXPECT(c.alloc == ROUTE_SHIM && c.free == ROUTE_SHIM);
	if (set_as(GFP_ROLE_COUNT) && p->stats != GFP_STATS_OFF) {
		enum route_kind counting = p->stats == GFP_STATS_TOTALS  ? ROUTE_COUNTED
		                           : p->stats == GFP_STATS_SITES ? ROUTE_PROFILED
		                                                         : ROUTE_SHIM;
		EXPECT(c.alloc == ROUTE_SHIM || c.alloc == counting);
		EXPECT(c.free == ROUTE_SHIM || c.free == counting);
	}
	if (injects)
		EXPECT(c.alloc == ROUTE_SHIM);
	if (set_as(GFP_ROLE_FILL) && p->junk)
		EXPECT(c.alloc == ROUTE_SHIM); /* every block handed out is filled */
	if (set_as(GFP_ROLE_BUDGET) && p->limit) {
		EXPECT(c.alloc == ROUTE_SHIM || c.alloc == ROUTE_BUDGET);
		EXPECT(c.free == ROUTE_SHIM || c.free == ROUTE_BUDGET);
	}
	if (shapes)
		EXPECT(c.alloc != ROUTE_DIRECT);
	if (set_as(GFP_ROLE_RESERVE) && p->reserve_thread)
		EXPECT(c.alloc == ROUTE_SHIM && c.free == ROUTE_SHIM);
	if (p->reserve_mode == 1 && p->reserve_prefault && !p->limit)
		EXPECT(c.alloc == ROUTE_SHIM); /* only the shim tries the pool first */
	if (records)
		EXPECT(c.alloc != ROUTE_DIRECT && c.alloc != ROUTE_WATCHED); /* sees failures */
	if (!shapes && !injects && !records && (!set_as(GFP_ROLE_COUNT) || !p->stats) && !p->ctl &&
	    !p->junk)
		EXPECT(c.alloc == ROUTE_DIRECT && c.free == ROUTE_DIRECT);
}

static char vals[GFP_KEY_COUNT][VALUES][64];
static int nvals[GFP_KEY_COUNT];

/* Three keys at their first and last values only, so that the test stays
 * well under a second. */
static int tri(size_t k, int a)
{
	return a ? nvals[k] - 1 : 0;
}

static void route_all(bool rules, char *text, size_t size)
{
	route_policy("", rules);
	for (size_t i = 0; i < GFP_KEY_COUNT; i++)
		for (int a = 0; a < nvals[i]; a++) {
			snprintf(text, size, "%s=%.63s", gfp_keys[i].name, vals[i][a]);
			route_policy(text, rules);
			for (size_t j = i + 1; j < GFP_KEY_COUNT; j++)
				for (int b = 0; b < nvals[j]; b++) {
					snprintf(text, size, "%s=%.63s;%s=%.63s", gfp_keys[i].name,
					         vals[i][a], gfp_keys[j].name, vals[j][b]);
					route_policy(text, rules);
				}
		}
	for (size_t i = 0; i < GFP_KEY_COUNT; i++)
		for (size_t j = i + 1; j < GFP_KEY_COUNT; j++)
			for (size_t k = j + 1; k < GFP_KEY_COUNT; k++)
				for (int abc = 0; abc < 8; abc++) {
					int a = tri(i, abc & 1), b = tri(j, abc >> 1 & 1),
					    c = tri(k, abc >> 2);
					if ((abc & 1 && !a) || (abc & 2 && !b) || (abc & 4 && !c))
						continue; /* a key of one value */
					snprintf(text, size, "%s=%.63s;%s=%.63s;%s=%.63s",
					         gfp_keys[i].name, vals[i][a], gfp_keys[j].name,
					         vals[j][b], gfp_keys[k].name, vals[k][c]);
					route_policy(text, rules);
				}
}

int main(void)
{
	for (size_t i = 0; i < GFP_KEY_COUNT; i++)
		nvals[i] = values_of(&gfp_keys[i], vals[i]);
	char text[512];
	for (int rec = 0; rec < 2; rec++) {
		records = rec;
		for (int rules = 0; rules < 2; rules++)
			route_all(rules, text, sizeof(text));
	}
	fprintf(stderr, "%d policies routed:", policies);
	for (int k = 0; k < ROUTE_KINDS; k++) {
		fprintf(stderr, " %s %d", kind_name[k], chosen[k]);
		CHECK(chosen[k] > 0);
	}
	fprintf(stderr, "\n");
	return CHECK_DONE();
}
