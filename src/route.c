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
static struct route_choice chosen;
static bool jemalloc_may_fail; /* route_watch_jemalloc was called */
bool route_free_switches;

struct route_needs route_needs_now(void)
{
	return (struct route_needs){
	    /* jemalloc's own functions only if they were found, and only for a
	     * policy that cannot change later */
	    .fixed = gfp_je_own && !gfp_policy.ctl,
	    .failures = gfp_slowpath_on,
	    .records = records_on(),
	    .stats = gfp_policy.stats,
	    .injections = gfp_inject_on,
	    .injections_fast = gfp_armed_fast,
	    .budget = gfp_budget_on,
	    .thread_reserve = gfp_policy.reserve_thread != 0,
	    .pool_first = policy_pool_first(),
	};
}

/* Each family but the shim's skips something, so each is chosen only when
 * the policy needs nothing it skips. */
struct route_choice route_choose(const struct route_needs *n)
{
	struct route_choice c = {ROUTE_SHIM, ROUTE_SHIM};
	if (!n->fixed)
		return c;
	/* What must see every call that succeeds, whatever the family: the
	 * injection decision, a thread's reserve or pool. */
	bool per_call = n->injections || n->thread_reserve || n->pool_first;
	if (!n->failures && !n->stats && !n->records)
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
	else if (c.alloc == ROUTE_COUNTED || c.alloc == ROUTE_PROFILED || c.alloc == ROUTE_BUDGET)
		c.free = c.alloc;
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

static void log_routes(void)
{
	struct gfp_routes *in = __atomic_load_n(&inner, __ATOMIC_RELAXED);
	/* By the function each route holds: a family may share one with
	 * another (the profiled realloc is the shim's). */
#define KIND(f)                                                                                    \
	(live->f == fam[ROUTE_SHIM].f       ? "shim"                                               \
	 : live->f == fam[ROUTE_WATCHED].f  ? "watched"                                            \
	 : live->f == fam[ROUTE_COUNTED].f  ? "counted"                                            \
	 : live->f == fam[ROUTE_PROFILED].f ? "profiled"                                           \
	 : live->f != fam[ROUTE_BUDGET].f   ? "jemalloc"                                           \
	 : in->f == fam[ROUTE_WATCHED].f    ? "budget+watched"                                     \
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
	case ROUTE_BUDGET: {
		bool watch =
		    jemalloc_can_fail() || __atomic_load_n(&jemalloc_may_fail, __ATOMIC_RELAXED);
		set_alloc(inner_, &fam[watch ? ROUTE_WATCHED : ROUTE_DIRECT]);
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
	case ROUTE_COUNTED:
		__atomic_store_n(&live->free, fam[chosen.free].free, __ATOMIC_RELAXED);
		break;
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
}
