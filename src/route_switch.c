/*
 * route_switch.c - the live route table, once route.c has installed it, and
 * the switches that flip it at run time: the budget's revocations
 * (route_budget_switch) and a free that must be seen (route_free_switch).
 *
 * Below the modules that flip them, so that budget.c and thread.c point
 * down at it: it must never call a module, only store pointers. Never on a
 * route itself: a route is one pointer, and a call racing a store takes
 * the old one, which is right too.
 */
#include "route_switch.h"

struct gfp_routes *route_live;
struct gfp_routes route_fam[ROUTE_KINDS];
struct route_choice route_chosen;
bool route_free_switches;

void route_set_alloc(struct gfp_routes *into, const struct gfp_routes *r)
{
	__atomic_store_n(&into->malloc, r->malloc, __ATOMIC_RELAXED);
	__atomic_store_n(&into->calloc, r->calloc, __ATOMIC_RELAXED);
	__atomic_store_n(&into->realloc, r->realloc, __ATOMIC_RELAXED);
	__atomic_store_n(&into->posix_memalign, r->posix_memalign, __ATOMIC_RELAXED);
	__atomic_store_n(&into->memalign, r->memalign, __ATOMIC_RELAXED);
	__atomic_store_n(&into->aligned_alloc, r->aligned_alloc, __ATOMIC_RELAXED);
}

void route_budget_switch(bool fast)
{
	route_set_alloc(route_live, &route_fam[fast ? ROUTE_BUDGET : ROUTE_SHIM]);
}

void route_free_switch(bool shim)
{
	__atomic_store_n(&route_live->free, route_fam[shim ? ROUTE_SHIM : route_chosen.free].free,
	                 __ATOMIC_RELAXED);
}
