/*
 * stats_paths.c - the hit table of stats=paths: eligible calls per call
 * path, counted as inject.c numbers them, and its part of the report
 * (stats.c prints it).
 *
 * A leaf below inject.c and stats.c: it calls neither, and never
 * allocates (it counts inside malloc).
 */
#include <stdbool.h>
#include <stdint.h>

#include "policy.h"
#include "stats_paths.h"

/* The hit table (stats=paths): eligible calls per call path (the path id
 * fail.site takes, site.depth frames deep), for gfp-sweep's recording run,
 * and the first of them by the process's eligible-call number (what fail.nth
 * counts), so that a sweep of every Nth call can still reach every path. */
#define HIT_TABLE 16384
struct hit_count {
	uint64_t id;    /* atomic; 0 = empty */
	uint64_t hits;  /* atomic */
	uint64_t first; /* atomic: the lowest call number seen, 0 = none yet */
	uint64_t early; /* atomic: hits before main (fail.startup=1) */
	/* The first, second and last hit by the first thread's own call
	 * numbers (what fail.site.call takes), valid while every hit is that
	 * thread's: the numbers other threads interleave with it change from
	 * run to run, its own do not. */
	uint64_t tfirst, tsecond, tlast;
	bool others; /* atomic: another thread hit it */
};
static struct hit_count hit_table[HIT_TABLE];
static uint64_t hit_overflow;  /* atomic: calls whose path found no slot (JSON: sites_overflow) */
static uint64_t startup_calls; /* atomic: eligible calls before main (fail.startup=1) */

/* Threads number their calls before they count them: the first to count a
 * path need not hold its lowest number, so keep the minimum. */
static void hit_first(struct hit_count *e, uint64_t call)
{
	uint64_t cur = __atomic_load_n(&e->first, __ATOMIC_RELAXED);
	while ((cur == 0 || call < cur) &&
	       !__atomic_compare_exchange_n(&e->first, &cur, call, false, __ATOMIC_RELAXED,
	                                    __ATOMIC_RELAXED))
		;
}

/* An eligible call (inject.c numbers them) on path `id`: call is its
 * number in the process, tcall the calling thread's own; early, before
 * main; mine, made by the process's initial thread. */
void stats_path_hit(uint64_t id, uint64_t call, uint64_t tcall, bool early, bool mine)
{
	if (early)
		__atomic_add_fetch(&startup_calls, 1, __ATOMIC_RELAXED);
	id |= id == 0;
	for (unsigned i = 0; i < 64; i++) {
		struct hit_count *e = &hit_table[(id + i) % HIT_TABLE];
		uint64_t cur = __atomic_load_n(&e->id, __ATOMIC_ACQUIRE);
		if (cur == 0 && __atomic_compare_exchange_n(&e->id, &cur, id, false,
		                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			cur = id;
		if (cur == id) {
			uint64_t hits = __atomic_add_fetch(&e->hits, 1, __ATOMIC_RELAXED);
			if (early)
				__atomic_add_fetch(&e->early, 1, __ATOMIC_RELAXED);
			hit_first(e, call);
			if (!mine) {
				__atomic_store_n(&e->others, true, __ATOMIC_RELAXED);
				return;
			}
			/* One thread writes these (the others only mark), in its
			 * order: hits is then its own count. */
			if (hits == 1)
				__atomic_store_n(&e->tfirst, tcall, __ATOMIC_RELAXED);
			else if (hits == 2)
				__atomic_store_n(&e->tsecond, tcall, __ATOMIC_RELAXED);
			__atomic_store_n(&e->tlast, tcall, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_add_fetch(&hit_overflow, 1, __ATOMIC_RELAXED);
}

void stats_paths_report(struct gfp_buf *b, uint64_t eligible, uint64_t other_thread)
{
	gfp_buf_printf(b,
	               ",\"eligible_calls\":%llu,\"startup_calls\":%llu,\"sites_overflow\":%llu,"
	               "\"other_thread_calls\":%llu,\"sites\":[",
	               (unsigned long long)eligible,
	               (unsigned long long)__atomic_load_n(&startup_calls, __ATOMIC_RELAXED),
	               (unsigned long long)__atomic_load_n(&hit_overflow, __ATOMIC_RELAXED),
	               (unsigned long long)other_thread);
	const char *sep = "";
	for (unsigned i = 0; i < HIT_TABLE; i++) {
		uint64_t id = __atomic_load_n(&hit_table[i].id, __ATOMIC_ACQUIRE);
		if (!id)
			continue;
		const struct hit_count *e = &hit_table[i];
		gfp_buf_printf(b, "%s{\"site\":\"%016llx\",\"hits\":%llu,\"first\":%llu", sep,
		               (unsigned long long)id,
		               (unsigned long long)__atomic_load_n(&e->hits, __ATOMIC_RELAXED),
		               (unsigned long long)__atomic_load_n(&e->first, __ATOMIC_RELAXED));
		if (!__atomic_load_n(&e->others, __ATOMIC_RELAXED)) /* the first thread's alone */
			gfp_buf_printf(
			    b, ",\"first_thread_calls\":[%llu,%llu,%llu]",
			    (unsigned long long)__atomic_load_n(&e->tfirst, __ATOMIC_RELAXED),
			    (unsigned long long)__atomic_load_n(&e->tsecond, __ATOMIC_RELAXED),
			    (unsigned long long)__atomic_load_n(&e->tlast, __ATOMIC_RELAXED));
		uint64_t early = __atomic_load_n(&hit_table[i].early, __ATOMIC_RELAXED);
		if (early) /* the hits a run sees only with fail.startup=1 */
			gfp_buf_printf(b, ",\"startup\":%llu", (unsigned long long)early);
		gfp_buf_printf(b, "}");
		sep = ",";
	}
	gfp_buf_printf(b, "]");
}

/* At start-up and after a gfp-ctl set, as the eligible calls (inject.c):
 * the table keeps the paths seen. */
void stats_paths_restart(void)
{
	__atomic_store_n(&startup_calls, 0, __ATOMIC_RELAXED);
}
