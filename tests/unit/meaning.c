/*
 * What a policy means (meaning_of), row by row: a policy, the facts that are
 * not keys, and what the process should then do, written out by hand from
 * the keys' documented roles: the flags that are on and the routes. (The
 * invariants over every policy the table allows are tests/unit/routes.c.)
 */
#include "check.h"
#include "meaning.h"

enum { J = 1, R = 2, C = 4, O = 8 }; /* je_own, rules, records, other process */

static const struct {
	const char *policy;
	int facts;
	const char *means;
} rows[] = {
    /* Nothing set, or only keys that speak: plain jemalloc, for good. */
    {"", J, "plain free_direct fixed alloc=direct free=direct"},
    {"confirm=1", J, "plain free_direct fixed alloc=direct free=direct"},
    {"fail.probability=0", J, "plain free_direct fixed alloc=direct free=direct"},
    /* jemalloc's own functions not found, or ctl=1: the shim's routes. */
    {"", 0, "plain free_direct alloc=shim free=shim"},
    {"ctl=1", J, "plain free_direct alloc=shim free=shim"},
    /* A budget. */
    {"limit=1G", J,
     "active unwinds slowpath budget plain free_direct fixed alloc=budget free=budget"},
    {"limit=1G", 0, "active unwinds slowpath budget plain free_direct alloc=shim free=shim"},
    {"limit=1G", J | C,
     "active unwinds slowpath budget records plain free_direct fixed alloc=budget free=budget"},
    {"limit=1G;reserve.thread=64K", J,
     "active unwinds slowpath budget reserve plain fixed alloc=shim free=shim"},
    {"stats=totals;limit=1G", J,
     "active unwinds slowpath budget plain fixed stats=totals alloc=shim free=shim"},
    /* What shapes failures alone: the watched routes. */
    {"retries=3", J, "active unwinds slowpath plain free_direct fixed alloc=watched free=watched"},
    {"", J | R, "active unwinds slowpath plain free_direct fixed alloc=watched free=watched"},
    /* Records see failures the watched routes would not hand on. */
    {"", J | C, "active unwinds records plain free_direct fixed alloc=shim free=shim"},
    /* Statistics alone. */
    {"stats=totals", J, "active unwinds plain fixed stats=totals alloc=counted free=counted"},
    {"stats=sites", J,
     "active unwinds profile plain fixed stats=sites alloc=profiled free=profiled"},
    {"stats=sites;limit=1G", J,
     "active unwinds slowpath budget profile plain fixed stats=sites alloc=shim free=shim"},
    {"stats=paths", J, "active unwinds inject profile fixed stats=paths alloc=shim free=shim"},
    {"stats=paths", J | O, "active unwinds profile plain fixed stats=paths alloc=shim free=shim"},
    /* Injection: a probability alone counts down in idle threads. */
    {"fail.probability=0.01", J,
     "active unwinds slowpath inject simple armed_fast free_direct fixed alloc=shim free=direct"},
    {"fail.probability=0.01", J | O, "unwinds plain free_direct fixed alloc=direct free=direct"},
    {"fail.probability=0.01", J | R,
     "active unwinds slowpath inject simple free_direct fixed alloc=shim free=shim"},
    {"fail.probability=0.01;limit=1G", J,
     "active unwinds slowpath inject simple budget free_direct fixed alloc=shim free=shim"},
    {"fail.probability=0.01;stats=totals", J,
     "active unwinds slowpath inject simple fixed stats=totals alloc=shim free=shim"},
    {"fail.probability=0.01;fail.times=3", J,
     "active unwinds slowpath inject free_direct fixed alloc=shim free=shim"},
    {"fail.probability=0.01;junk=64", J,
     "active unwinds slowpath inject fill free_direct fixed alloc=shim free=shim"},
    {"fail.nth=5", J, "active unwinds slowpath inject free_direct fixed alloc=shim free=shim"},
    /* The junk fill, and a pool that serves before jemalloc. */
    {"junk=64", J, "active unwinds fill free_direct fixed alloc=shim free=shim"},
    {"reserve.mode=tokens;reserve.prefault=1", J,
     "active unwinds slowpath pool_first free_direct fixed alloc=shim free=shim"},
    {"reserve.mode=tokens;reserve.prefault=1;limit=1G", J,
     "active unwinds slowpath budget plain free_direct fixed alloc=budget free=budget"},
};

static const char *const route_name[ROUTE_KINDS] = {
    [ROUTE_SHIM] = "shim",       [ROUTE_DIRECT] = "direct",     [ROUTE_WATCHED] = "watched",
    [ROUTE_COUNTED] = "counted", [ROUTE_PROFILED] = "profiled", [ROUTE_BUDGET] = "budget",
};

static const char *const stats_name[] = {
    [GFP_STATS_OFF] = "off",
    [GFP_STATS_TOTALS] = "totals",
    [GFP_STATS_SITES] = "sites",
    [GFP_STATS_PATHS] = "paths",
};

/* The flags that are on, in struct order, then the level and the routes. */
static void describe(const struct gfp_meaning *m, char *out, size_t n)
{
	struct {
		bool on;
		const char *name;
	} flags[] = {
	    /* clang-format off */
	    {m->active, "active"},
	    {m->unwinds, "unwinds"},
	    {m->slowpath, "slowpath"},
	    {m->inject, "inject"},
	    {m->inject_simple, "simple"},
	    {m->armed_fast, "armed_fast"},
	    {m->budget, "budget"},
	    {m->thread_reserve, "reserve"},
	    {m->pool_first, "pool_first"},
	    {m->fill, "fill"},
	    {m->records, "records"},
	    {m->profile, "profile"},
	    {m->plain, "plain"},
	    {m->free_direct_ok, "free_direct"},
	    {m->fixed, "fixed"},
	    /* clang-format on */
	};
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (flags[i].on)
			len += (size_t)snprintf(out + len, n - len, "%s ", flags[i].name);
	if (m->stats)
		len += (size_t)snprintf(out + len, n - len, "stats=%s ", stats_name[m->stats]);
	snprintf(out + len, n - len, "alloc=%s free=%s", route_name[m->route.alloc],
	         route_name[m->route.free]);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct gfp_policy p;
		struct gfp_cfg_err err = {0};
		config_defaults(&p);
		CHECK(config_parse(&p, "test", rows[i].policy, strlen(rows[i].policy), false, NULL,
		                   &err) == 0);
		size_t drop;
		CHECK(config_contradiction(&p, &drop) == NULL);
		struct gfp_facts f = {.je_own = rows[i].facts & J,
		                      .rules = rows[i].facts & R,
		                      .records = rows[i].facts & C,
		                      .other_process = rows[i].facts & O};
		struct gfp_meaning m = meaning_of(&p, &f);
		char got[512];
		describe(&m, got, sizeof(got));
		if (strcmp(got, rows[i].means) != 0)
			fprintf(stderr, "policy '%s' facts %d:\n", rows[i].policy, rows[i].facts);
		CHECK_STR(got, rows[i].means);
	}
	return CHECK_DONE();
}
