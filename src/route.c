/*
 * route.c - the one owner of the routes' choice: pointing the live table
 * at the families meaning.c chose for the policy (gfp_meaning.route) once
 * it is known, and following jemalloc once it may fail. The switches that
 * the budget and the registry of threads flip later are route_switch.c's,
 * below them.
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
#include "route_switch.h"
#include "internal.h"

static struct gfp_routes *inner; /* atomic: where the budget family jumps */
static struct gfp_routes sized[ROUTE_SIZED_KINDS];
static bool have_sized;
static bool jemalloc_may_fail; /* route_watch_jemalloc was called */

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

/* Where a small request may fail in jemalloc, the watched and counted
 * families themselves; elsewhere their sized forms. */
static bool jemalloc_watched(void)
{
	return jemalloc_can_fail() || __atomic_load_n(&jemalloc_may_fail, __ATOMIC_RELAXED);
}

static const struct gfp_routes *watching(enum route_kind k)
{
	if (!have_sized || jemalloc_watched())
		return &route_fam[k];
	return &sized[k == ROUTE_WATCHED ? ROUTE_SIZED_WATCHED : ROUTE_SIZED_COUNTED];
}

static void log_routes(void)
{
	struct gfp_routes *in = __atomic_load_n(&inner, __ATOMIC_RELAXED);
	/* By the function each route holds: a family may share one with
	 * another. The watched and counted families, where they watch every
	 * request: +all. */
#define KIND(f)                                                                                    \
	(route_live->f == route_fam[ROUTE_SHIM].f                    ? "shim"                      \
	 : route_live->f == sized[ROUTE_SIZED_WATCHED].f             ? "watched"                   \
	 : route_live->f == sized[ROUTE_SIZED_COUNTED].f             ? "counted"                   \
	 : route_live->f == route_fam[ROUTE_WATCHED].f && have_sized ? "watched+all"               \
	 : route_live->f == route_fam[ROUTE_WATCHED].f               ? "watched"                   \
	 : route_live->f == route_fam[ROUTE_COUNTED].f && have_sized ? "counted+all"               \
	 : route_live->f == route_fam[ROUTE_COUNTED].f               ? "counted"                   \
	 : route_live->f == route_fam[ROUTE_PROFILED].f              ? "profiled"                  \
	 : route_live->f != route_fam[ROUTE_BUDGET].f                ? "jemalloc"                  \
	 : in->f == route_fam[ROUTE_WATCHED].f                       ? "budget+watched"            \
	                                                             : "budget")
	gfp_log(GFP_LOG_INFO,
	        "routes: malloc=%s calloc=%s realloc=%s posix_memalign=%s memalign=%s "
	        "aligned_alloc=%s free=%s",
	        KIND(malloc), KIND(calloc), KIND(realloc), KIND(posix_memalign), KIND(memalign),
	        KIND(aligned_alloc),
	        route_live->free == route_fam[ROUTE_SHIM].free       ? "shim"
	        : route_live->free == route_fam[ROUTE_COUNTED].free  ? "counted"
	        : route_live->free == route_fam[ROUTE_PROFILED].free ? "profiled"
	                                                             : "jemalloc");
#undef KIND
}

void route_start(struct gfp_routes *live_, struct gfp_routes *inner_,
                 const struct gfp_routes families[ROUTE_KINDS])
{
	route_install(live_, inner_, families, gfp_meaning.route);
	if (gfp_policy.confirm)
		log_routes();
}

void route_install(struct gfp_routes *live_, struct gfp_routes *inner_,
                   const struct gfp_routes families[ROUTE_KINDS], struct route_choice choice)
{
	memcpy(route_fam, families, sizeof(route_fam));
	route_live = live_;
	route_chosen = choice;
	switch (route_chosen.alloc) {
	case ROUTE_SHIM:
		break;
	case ROUTE_WATCHED:
	case ROUTE_COUNTED:
		route_set_alloc(route_live, watching(route_chosen.alloc));
		break;
	case ROUTE_BUDGET: {
		route_set_alloc(inner_,
		                &route_fam[jemalloc_watched() ? ROUTE_WATCHED : ROUTE_DIRECT]);
		__atomic_store_n(&inner, inner_, __ATOMIC_RELEASE);
		budget_route_hook(); /* points the allocation routes */
		break;
	}
	default:
		route_set_alloc(route_live, &route_fam[route_chosen.alloc]);
		break;
	}
	switch (route_chosen.free) {
	case ROUTE_DIRECT:
		__atomic_store_n(&route_live->free, route_fam[route_chosen.free].free,
		                 __ATOMIC_RELAXED);
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

/* A call racing this goes unwatched, as it would have before. */
void route_watch_jemalloc(void)
{
	__atomic_store_n(&jemalloc_may_fail, true, __ATOMIC_RELAXED);
	struct gfp_routes *in = __atomic_load_n(&inner, __ATOMIC_ACQUIRE);
	if (in)
		route_set_alloc(in, &route_fam[ROUTE_WATCHED]);
	enum route_kind k = __atomic_load_n(&route_chosen.alloc, __ATOMIC_ACQUIRE);
	if (route_live && (k == ROUTE_WATCHED || k == ROUTE_COUNTED))
		route_set_alloc(route_live, &route_fam[k]);
}

void route_sized(const struct gfp_routes s[ROUTE_SIZED_KINDS])
{
	memcpy(sized, s, sizeof(sized));
	have_sized = true;
}
