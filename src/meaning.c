/*
 * meaning.c - what the policy in force means: from the keys (and the few
 * facts that are not keys: GFP_RULES, GFP_RECORD, GFP_INJECT_PID, whether
 * jemalloc's own functions were found) to one struct gfp_meaning, the
 * routes included. meaning_of is pure, so that tests/unit/meaning.c checks
 * it against a table. Gathering the facts, publishing the meaning and
 * setting the modules up to it is wiring (apply.c): this
 * file calls no module.
 *
 * Any key that shapes allocation puts the process under the policy; the
 * keys about messages (and the control socket) leave it idle, as plain
 * jemalloc. The fail.* keys count only while they can inject: a gfp-ctl set
 * that disarms makes the process idle again.
 */
#include "meaning.h"

struct gfp_policy gfp_policy;
struct gfp_meaning gfp_meaning;
uint64_t gfp_policy_gen;
bool gfp_secure;
bool gfp_strict = true;

/* Each family but the shim's skips something, so each is chosen only when
 * the policy needs nothing it skips. */
static struct route_choice meaning_route(const struct gfp_meaning *m)
{
	struct route_choice c = {ROUTE_SHIM, ROUTE_SHIM};
	if (!m->fixed)
		return c;
	/* What must see every call that succeeds, whatever the family: the
	 * injection decision, a thread's reserve or pool, the junk fill. */
	bool per_call = m->inject || m->thread_reserve || m->pool_first || m->fill;
	if (!m->slowpath && !m->stats && !m->records && !m->fill)
		c.alloc = ROUTE_DIRECT; /* nothing can ever need to see a call */
	else if (!per_call && !m->budget && !m->records) {
		/* Only failures shape (watched), or statistics alone count. */
		if (!m->stats)
			c.alloc = ROUTE_WATCHED;
		else if (m->stats == GFP_STATS_TOTALS && !m->slowpath)
			c.alloc = ROUTE_COUNTED;
		else if (m->stats == GFP_STATS_SITES && !m->slowpath)
			c.alloc = ROUTE_PROFILED;
	} else if (!per_call && m->budget && !m->stats) {
		/* Rules and records may stay: they look at failing requests,
		 * which the budget family hands to the policy path. */
		c.alloc = ROUTE_BUDGET;
	}
	/* fail.probability alone injects on allocations only (armed_fast
	 * implies no statistics), so frees need not be seen. */
	if (c.alloc == ROUTE_DIRECT || m->armed_fast)
		c.free = ROUTE_DIRECT;
	else if (c.alloc != ROUTE_SHIM)
		c.free = c.alloc; /* jemalloc's own but while a free must be seen */
	return c;
}

/* Only a probability (and a seed, where, verbose, stack filters): which
 * call fails depends on nothing but the thread's draws. */
static bool meaning_probability_alone(const struct gfp_policy *p)
{
	return p->fail_probability > 0 && p->stats != GFP_STATS_PATHS && !p->fail_nth &&
	       !p->fail_site.v[0] && !p->fail_persist && !p->fail_thread.v[0] &&
	       p->fail_times < 0 && !p->fail_space && p->fail_interval <= 1 && !p->fail_min &&
	       !p->fail_max && !p->fail_ignore_wait && !p->fail_startup && !p->fail_ldso &&
	       p->fail_where == WHERE_ENTRY && !p->junk;
}

struct gfp_meaning meaning_of(const struct gfp_policy *p, const struct gfp_facts *f)
{
	/* fail.* arms at these three; the other fail.* keys refine them. */
	bool armed = p->fail_probability > 0 || p->fail_nth > 0 || p->fail_site.v[0];
	bool shapes = f->rules || config_shapes(p); /* SHAPE, BUDGET, RESERVE keys */
	struct gfp_meaning m = {
	    .stats = p->stats,
	    .budget = p->limit != 0,
	    .thread_reserve = p->reserve_thread != 0,
	    .fill = p->junk != 0,
	    .records = f->records,
	    .profile = p->stats >= GFP_STATS_SITES,
	    .fixed = f->je_own && !p->ctl,
	};
	m.unwinds = shapes || armed || m.stats || m.records || m.fill;
	m.inject = (armed || p->stats == GFP_STATS_PATHS) && !f->other_process;
	m.slowpath = shapes || (armed && !f->other_process);
	m.inject_simple = !f->other_process && meaning_probability_alone(p);
	m.armed_fast = m.inject_simple && !shapes && !m.stats;
	m.pool_first = p->reserve_mode == GFP_RESERVE_TOKENS && p->reserve_prefault && !m.budget;
	m.plain = !m.inject && !m.pool_first && !m.fill;
	m.free_direct_ok = !m.stats && !m.thread_reserve;
	/* Statistics and records only watch: they need the policy path but
	 * must not change what a failing request does. */
	m.active = m.slowpath || m.stats || m.records || m.fill;
	m.route = meaning_route(&m);
	return m;
}
