/*
 * route.c - the one owner of routing: which family serves malloc, free and
 * their kin (route_choose, from what the policy needs to see), pointing the
 * live table at it once the policy is known, and every later switch.
 *
 * Never on a route itself: the routes read their table with one load and
 * jump; everything here runs once at start-up or on a cold path (a
 * revocation, a waiter, a thread's exit, a failing mmap). A route is one
 * pointer: a call racing a write takes the old one, which is right too.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "route.h"

static struct gfp_routes *live;  /* preload/routes.c's gfp_routes */
static struct gfp_routes *inner; /* atomic: where the budget family jumps */
static struct gfp_routes fam[ROUTE_KINDS];
static struct gfp_routes sized[ROUTE_SIZED_KINDS];
static bool have_sized;
static struct route_choice chosen;
static bool jemalloc_may_fail; /* route_watch_jemalloc was called */
bool route_free_switches;

/* The roles of what is in force (1u << GFP_ROLE_*): each key the policy
 * sets, by its ROLE column in keys.def, and the two inputs that are not keys:
 * GFP_RULES shapes failing requests, GFP_RECORD records them. */
#define ROLE(r)     (1u << GFP_ROLE_##r)
#define ROLE_RECORD (1u << (GFP_ROLE_INJECT + 1))
#define SHAPING     (ROLE(SHAPE) | ROLE(BUDGET) | ROLE(RESERVE))

static unsigned roles_in_force(void)
{
	unsigned r = 0;
	for (size_t i = 0; i < GFP_KEY_COUNT; i++)
		if (gfp_policy.set[i])
			r |= 1u << gfp_keys[i].role;
	if (gfp_rules_on)
		r |= ROLE(SHAPE);
	if (records_on())
		r |= ROLE_RECORD;
	return r;
}

/* From the roles; a role's key is set, but some keys also have an off value
 * (limit=0, reserve.thread=0, ctl=0, fail.probability=0), and a few facts
 * are no key's role at all: those stay explicit below. Runs at start-up and
 * on a gfp-ctl set, never on a route. tests/unit/routes.c checks that this
 * equals what the modules derive (policy_derive) for every policy it builds. */
struct route_needs route_needs_now(void)
{
	const struct gfp_policy *p = &gfp_policy;
	unsigned r = roles_in_force();
	struct route_needs n = {
	    /* not a role: jemalloc's own functions were found */
	    .fixed = gfp_je_own && !((r & ROLE(CONTROL)) && p->ctl),
	    .records = r & ROLE_RECORD,
	    /* the level, which GFP_REPORT raises to totals without the key */
	    .stats = p->stats,
	    .budget = (r & ROLE(BUDGET)) && p->limit,
	    .thread_reserve = (r & ROLE(RESERVE)) && p->reserve_thread,
	};
	/* INJECT keys arm only at these three (the others refine an armed
	 * one); stats=paths counts through injection's hit table. Not a role:
	 * GFP_INJECT_PID may name another process. */
	bool armed =
	    (r & ROLE(INJECT)) && (p->fail_probability > 0 || p->fail_nth > 0 || p->fail_site.v[0]);
	bool paths = (r & ROLE(COUNT)) && p->stats == GFP_STATS_PATHS;
	bool here = (armed || paths) && !inject_other_process();
	n.injections = here;
	n.failures = (r & SHAPING) || (armed && here);
	/* Not a role: fail.probability alone (gfp_inject_simple, inject.c),
	 * with nothing that shapes or counts. */
	n.injections_fast = armed && here && gfp_inject_simple && !(r & SHAPING) && !p->stats;
	/* Not a role: two SHAPE keys' values, tokens prefaulted, no budget. */
	n.pool_first = p->reserve_mode == GFP_RESERVE_TOKENS && p->reserve_prefault && !n.budget;
	n.fill = (r & ROLE(FILL)) && p->junk;
	return n;
}

/* Each family but the shim's skips something, so each is chosen only when
 * the policy needs nothing it skips. */
struct route_choice route_choose(const struct route_needs *n)
{
	struct route_choice c = {ROUTE_SHIM, ROUTE_SHIM};
	if (!n->fixed)
		return c;
	/* What must see every call that succeeds, whatever the family: the
	 * injection decision, a thread's reserve or pool, the junk fill. */
	bool per_call = n->injections || n->thread_reserve || n->pool_first || n->fill;
	if (!n->failures && !n->stats && !n->records && !n->fill)
		c.alloc = ROUTE_DIRECT; /* nothing can ever need to see a call */
	else if (!per_call && !n->budget && !n->records) {
		/* Only failures shape (watched), or statistics alone count. */
		if (!n->stats)
			c.alloc = ROUTE_WATCHED;
		else if (n->stats == GFP_STATS_TOTALS && !n->failures)
			c.alloc = ROUTE_COUNTED;
		else if (n->stats == GFP_STATS_SITES && !n->failures)
			c.alloc = ROUTE_PROFILED;
	} else if (!per_call && n->budget && !n->stats) {
		/* Rules and records may stay: they look at failing requests,
		 * which the budget family hands to the policy path. */
		c.alloc = ROUTE_BUDGET;
	}
	/* fail.probability alone injects on allocations only (injections_fast
	 * implies no statistics), so frees need not be seen. */
	if (c.alloc == ROUTE_DIRECT || n->injections_fast)
		c.free = ROUTE_DIRECT;
	else if (c.alloc != ROUTE_SHIM)
		c.free = c.alloc; /* jemalloc's own but while a free must be seen */
	return c;
}

/* Whether jemalloc can fail a request of a batch or less (a few pages from
 * an extent it maps): only when the address space or the data segment is
 * limited (ulimit -v, -d) or the kernel refuses to overcommit. Elsewhere
 * mmap fails only for sizes beyond memory and swap, or past vm.max_map_count
 * (then preload/oscalls.c calls route_watch_jemalloc). */
static bool jemalloc_can_fail(void)
{
	struct rlimit as, data;
	if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur != RLIM_INFINITY ||
	    getrlimit(RLIMIT_DATA, &data) != 0 || data.rlim_cur != RLIM_INFINITY)
		return true;
	char c = 0;
	int fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = 0;
		close(fd);
	}
	return c == '2';
}

/* Every route of `into` but free's. */
static void set_alloc(struct gfp_routes *into, const struct gfp_routes *r)
{
	__atomic_store_n(&into->malloc, r->malloc, __ATOMIC_RELAXED);
	__atomic_store_n(&into->calloc, r->calloc, __ATOMIC_RELAXED);
	__atomic_store_n(&into->realloc, r->realloc, __ATOMIC_RELAXED);
	__atomic_store_n(&into->posix_memalign, r->posix_memalign, __ATOMIC_RELAXED);
	__atomic_store_n(&into->memalign, r->memalign, __ATOMIC_RELAXED);
	__atomic_store_n(&into->aligned_alloc, r->aligned_alloc, __ATOMIC_RELAXED);
}

/* Where a small request may fail in jemalloc, the watched and counted
 * families themselves; elsewhere their sized forms. */
static bool jemalloc_watched(void)
{
	return jemalloc_can_fail() || __atomic_load_n(&jemalloc_may_fail, __ATOMIC_RELAXED);
}

static const struct gfp_routes *watching(enum route_kind k)
{
	if (!have_sized || jemalloc_watched())
		return &fam[k];
	return &sized[k == ROUTE_WATCHED ? ROUTE_SIZED_WATCHED : ROUTE_SIZED_COUNTED];
}

static void log_routes(void)
{
	struct gfp_routes *in = __atomic_load_n(&inner, __ATOMIC_RELAXED);
	/* By the function each route holds: a family may share one with
	 * another. The watched and counted families, where they watch every
	 * request: +all. */
#define KIND(f)                                                                                    \
	(live->f == fam[ROUTE_SHIM].f                    ? "shim"                                  \
	 : live->f == sized[ROUTE_SIZED_WATCHED].f       ? "watched"                               \
	 : live->f == sized[ROUTE_SIZED_COUNTED].f       ? "counted"                               \
	 : live->f == fam[ROUTE_WATCHED].f && have_sized ? "watched+all"                           \
	 : live->f == fam[ROUTE_WATCHED].f               ? "watched"                               \
	 : live->f == fam[ROUTE_COUNTED].f && have_sized ? "counted+all"                           \
	 : live->f == fam[ROUTE_COUNTED].f               ? "counted"                               \
	 : live->f == fam[ROUTE_PROFILED].f              ? "profiled"                              \
	 : live->f != fam[ROUTE_BUDGET].f                ? "jemalloc"                              \
	 : in->f == fam[ROUTE_WATCHED].f                 ? "budget+watched"                        \
	                                                 : "budget")
	gfp_log(GFP_LOG_INFO,
	        "routes: malloc=%s calloc=%s realloc=%s posix_memalign=%s memalign=%s "
	        "aligned_alloc=%s free=%s",
	        KIND(malloc), KIND(calloc), KIND(realloc), KIND(posix_memalign), KIND(memalign),
	        KIND(aligned_alloc),
	        live->free == fam[ROUTE_SHIM].free       ? "shim"
	        : live->free == fam[ROUTE_COUNTED].free  ? "counted"
	        : live->free == fam[ROUTE_PROFILED].free ? "profiled"
	                                                 : "jemalloc");
#undef KIND
}

void route_start(struct gfp_routes *live_, struct gfp_routes *inner_,
                 const struct gfp_routes families[ROUTE_KINDS])
{
	struct route_needs needs = route_needs_now();
	route_install(live_, inner_, families, route_choose(&needs));
	if (gfp_policy.confirm)
		log_routes();
}

void route_install(struct gfp_routes *live_, struct gfp_routes *inner_,
                   const struct gfp_routes families[ROUTE_KINDS], struct route_choice choice)
{
	memcpy(fam, families, sizeof(fam));
	live = live_;
	chosen = choice;
	switch (chosen.alloc) {
	case ROUTE_SHIM:
		break;
	case ROUTE_WATCHED:
	case ROUTE_COUNTED:
		set_alloc(live, watching(chosen.alloc));
		break;
	case ROUTE_BUDGET: {
		set_alloc(inner_, &fam[jemalloc_watched() ? ROUTE_WATCHED : ROUTE_DIRECT]);
		__atomic_store_n(&inner, inner_, __ATOMIC_RELEASE);
		budget_route_hook(); /* points the allocation routes */
		break;
	}
	default:
		set_alloc(live, &fam[chosen.alloc]);
		break;
	}
	switch (chosen.free) {
	case ROUTE_DIRECT:
		__atomic_store_n(&live->free, fam[chosen.free].free, __ATOMIC_RELAXED);
		break;
	case ROUTE_WATCHED:
	case ROUTE_COUNTED:
	case ROUTE_PROFILED:
	case ROUTE_BUDGET:
		route_free_switches = true;
		thread_update_free_direct(); /* calls route_free_switch */
		break;
	default:
		break;
	}
}

void route_budget_switch(bool fast)
{
	set_alloc(live, &fam[fast ? ROUTE_BUDGET : ROUTE_SHIM]);
}

void route_free_switch(bool shim)
{
	__atomic_store_n(&live->free, fam[shim ? ROUTE_SHIM : chosen.free].free, __ATOMIC_RELAXED);
}

/* A call racing this goes unwatched, as it would have before. */
void route_watch_jemalloc(void)
{
	__atomic_store_n(&jemalloc_may_fail, true, __ATOMIC_RELAXED);
	struct gfp_routes *in = __atomic_load_n(&inner, __ATOMIC_ACQUIRE);
	if (in)
		set_alloc(in, &fam[ROUTE_WATCHED]);
	enum route_kind k = __atomic_load_n(&chosen.alloc, __ATOMIC_ACQUIRE);
	if (live && (k == ROUTE_WATCHED || k == ROUTE_COUNTED))
		set_alloc(live, &fam[k]);
}

void route_sized(const struct gfp_routes s[ROUTE_SIZED_KINDS])
{
	memcpy(sized, s, sizeof(sized));
	have_sized = true;
}
