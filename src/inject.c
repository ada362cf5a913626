/*
 * inject.c - fault injection: one attribute set (the fail.* keys) and one
 * decision, inject_should_fail(), with the checks in the order of the
 * kernel's should_fail_ex (lib/fault-inject.c), cheapest first.
 *
 * Pre-filters decide which calls are eligible at all (and so counted):
 * nothing before main unless fail.startup=1, and even then nothing from
 * the libraries only the shim needs (site_deps.c), nothing ld.so asks for
 * itself unless fail.ldso=1 (before main that is the loader's own work,
 * which no program can handle), the size range,
 * never NOFAIL at entry, and with fail.ignore_wait nothing that may sleep.
 * Every injection is recorded (GFP_RECORD) before the failing call returns.
 */
#include <math.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "glob.h"
#include "log.h"
#include "meaning.h"
#include "context.h"
#include "rules.h"
#include "budget.h"
#include "unwind.h"
#include "inject.h"
#include "records.h"
#include "stats_paths.h"
#include "ipcache.h"
#include "path.h"

double gfp_inject_probability;
bool gfp_main_started;

static uint64_t process_calls;          /* atomic: eligible calls of the process (when needed) */
static bool process_count;              /* fail.nth counts the process's calls */
static int64_t times_left;              /* atomic */
static int64_t space_left;              /* atomic */
static uint64_t interval_count;         /* atomic */
static uint64_t path_wanted, path_hits; /* path_hits atomic */
static bool fired;                      /* atomic: for fail.persist */
static bool stack_filter;
static uint64_t filter_epoch; /* atomic: one more at each inject_init */
static struct gfp_ipcache filter_cache;
static bool count_paths; /* stats=paths: each eligible call's path is counted (stats.c) */

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* main has not started: the program's start-up (preload/start.c). */
static bool before_main(void)
{
	return !__atomic_load_n(&gfp_main_started, __ATOMIC_ACQUIRE);
}

/* The process's initial thread (which runs the constructors and main):
 * its own call numbers are what fail.site.call counts, whatever the other
 * threads do meanwhile. Their calls are counted for the report. Asked once
 * per thread (a fork's child is its own initial thread: the flag is reset
 * at fork, inject_atfork_child). */
static uint64_t other_thread_calls; /* atomic */

static bool in_first_thread(void)
{
	if (!gfp_tls.inject.initial)
		gfp_tls.inject.initial = syscall(SYS_gettid) == getpid() ? 1 : -1;
	if (gfp_tls.inject.initial > 0)
		return true;
	__atomic_add_fetch(&other_thread_calls, 1, __ATOMIC_RELAXED);
	return false;
}

/* The counts the paths report (stats.c) takes from injection. */
uint64_t inject_eligible_calls(void)
{
	return __atomic_load_n(&process_calls, __ATOMIC_RELAXED);
}

uint64_t inject_other_thread_calls(void)
{
	return __atomic_load_n(&other_thread_calls, __ATOMIC_RELAXED);
}

/* GFP_INJECT_PID: gfp-sweep fails calls of the target process only, not of
 * the programs it runs (unless --follow). */
bool inject_other_process(void)
{
	const char *only = secure_getenv("GFP_INJECT_PID");
	if (!only || !*only)
		return false;
	long pid = 0;
	for (const char *c = only; *c >= '0' && *c <= '9'; c++)
		pid = pid * 10 + (*c - '0');
	return pid != (long)getpid();
}

/* At start-up, and after a gfp-ctl set (apply.c): every count starts
 * again, as for a new process (threads draw afresh too, thread.c). */
void inject_init(void)
{
	const struct gfp_policy *p = &gfp_policy;
	if (inject_other_process())
		return;
	count_paths = p->stats == GFP_STATS_PATHS;
	process_count = (p->fail_nth > 0 && !p->fail_nth_thread) || count_paths;
	times_left = p->fail_times;
	space_left = (int64_t)p->fail_space;
	__atomic_store_n(&process_calls, 0, __ATOMIC_RELAXED);
	stats_paths_restart();
	__atomic_store_n(&interval_count, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&path_hits, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fired, false, __ATOMIC_RELAXED);
	stack_filter = p->fail_sym.v[0] || p->fail_lib.v[0] || p->fail_reject_sym.v[0] ||
	               p->fail_reject_lib.v[0];
	__atomic_add_fetch(&filter_epoch, 1, __ATOMIC_RELAXED);
	gfp_inject_probability = p->fail_probability;
	path_wanted = 0;
	for (const char *c = p->fail_site.v; *c; c++)
		path_wanted =
		    path_wanted * 16 + (uint64_t)(*c <= '9' ? *c - '0' : (*c | 0x20) - 'a' + 10);
}

uint64_t inject_child_ordinal(void)
{
	return splitmix(gfp_tls.inject.ordinal * 0x100000001b3ULL + ++gfp_tls.inject.children);
}

uint64_t inject_seed_rng(void)
{
	return splitmix((uint64_t)gfp_policy.fail_seed ^ splitmix(gfp_tls.inject.ordinal)) | 1;
}

static bool thread_matches(void)
{
	char name[16];
	return glob_match(gfp_policy.fail_thread.v, thread_name(name));
}

/* The stack filters look at fail.depth frames, up to the most keys.def
 * allows: their arrays hold that many. */
#define FILTER_FRAMES 64
#define KEY(id, name, type, role, def, min, max, choices, help)                                    \
	_Static_assert(GFP_K_##id != GFP_K_fail_depth || (max) == FILTER_FRAMES,                   \
	               "fail.depth's max in keys.def is FILTER_FRAMES");
#include "keys.def"
#undef KEY

/* An injection's backtrace (records, fail.verbose) keeps at most 32 of
 * them: beside fire()'s message buffer, 64 named frames would double the
 * shim's deepest stack inside malloc. */
#define FIRE_FRAMES 32

static int fail_depth(void)
{
	return (int)gfp_policy.fail_depth < FILTER_FRAMES ? (int)gfp_policy.fail_depth
	                                                  : FILTER_FRAMES;
}

static bool stack_ok(const struct gfp_frame *f, int n)
{
	const struct gfp_policy *p = &gfp_policy;
	if (p->fail_sym.v[0] && !unwind_any_frame(f, n, p->fail_sym.v, false))
		return false;
	if (p->fail_lib.v[0] && !unwind_any_frame(f, n, p->fail_lib.v, true))
		return false;
	if (p->fail_reject_sym.v[0] && unwind_any_frame(f, n, p->fail_reject_sym.v, false))
		return false;
	if (p->fail_reject_lib.v[0] && unwind_any_frame(f, n, p->fail_reject_lib.v, true))
		return false;
	return true;
}

/* The stack filter, decided once per call path (the first fail.depth frames
 * outside the shim, as their return addresses) and cached, as GFP_RULES'
 * sym: rules are: naming the frames costs tens of microseconds, an unwind
 * of return addresses and a cache look-up about one. The key carries the
 * policy's epoch: after a gfp-ctl set the old answers are not looked at. */
static uint64_t filter_compute(const void *arg)
{
	(void)arg;
	struct gfp_frame frames[FILTER_FRAMES];
	int n = unwind_capture(frames, fail_depth());
	return stack_ok(frames, n) ? 2 : 1;
}

static bool filter_passes(void)
{
	uintptr_t ips[FILTER_FRAMES];
	int n = site_ips(ips, fail_depth());
	/* site_key is odd and the epoch's part even: never 0. */
	uint64_t key = site_key(ips, n) +
	               __atomic_load_n(&filter_epoch, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c16ULL;
	return ipcache_lookup(&filter_cache, key, filter_compute, NULL) == 2;
}

/* A place to set a breakpoint: every injection passes here. */
__attribute__((noinline)) void inject_fired(const struct gfp_req *req)
{
	__asm__ volatile("" : : "r"(req) : "memory");
}

static bool fire(struct gfp_req *req)
{
	/* atomic_dec_not_zero(&attr->times): counts down, never vetoes (a fail
	 * of fail-nth happens whatever times says). */
	if (gfp_policy.fail_times >= 0) {
		int64_t t = __atomic_load_n(&times_left, __ATOMIC_RELAXED);
		while (t > 0 && !__atomic_compare_exchange_n(&times_left, &t, t - 1, false,
		                                             __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
	__atomic_store_n(&fired, true, __ATOMIC_RELAXED);
	inject_fired(req);
	if (!records_on() && !gfp_policy.fail_verbose)
		return true; /* nobody looks: no backtrace to take */
	struct gfp_frame frames[FIRE_FRAMES];
	int n = unwind_capture(frames, fail_depth() < FIRE_FRAMES ? fail_depth() : FIRE_FRAMES);
	if (!req->path)
		req->path = path_of_caller();
	/* (tools tell failures before main apart: the program's start-up) */
	record_event("injection", req, frames, n, before_main() ? "\"startup\":true" : NULL);
	if (gfp_policy.fail_verbose && !(req->gfp & GFP_NOWARN)) {
		char msg[8192], names[128];
		struct gfp_buf b = {msg, sizeof(msg) - 1, 0};
		gfp_flags_name(req->gfp, names, sizeof(names));
		gfp_buf_printf(
		    &b,
		    "gfpshim: info: FAULT_INJECTION: forcing a failure: size %zu mode:%s "
		    "%#x entry %s call %llu site %016llx",
		    req->size, names, req->gfp, gfp_entry_name[req->entry],
		    (unsigned long long)req->call, (unsigned long long)req->path);
		unwind_format(&b, frames, n);
		msg[b.len++] = '\n';
		gfp_log_raw(msg, b.len);
	}
	return true;
}

static bool eligible(struct gfp_req *req)
{
	const struct gfp_policy *p = &gfp_policy;
	if ((!p->fail_ldso && site_in_ldso(req->caller)) ||
	    (before_main() && (!p->fail_startup || site_in_shim_deps(req->caller))))
		return false;
	if (req->size < p->fail_min || (p->fail_max && req->size > p->fail_max))
		return false;
	context_resolve(req);
	if (p->fail_where == WHERE_ENTRY && (req->gfp & GFP_NOFAIL))
		return false;
	if (p->fail_ignore_wait && (req->gfp & GFP_DIRECT_RECLAIM_BIT))
		return false;
	return true;
}

/* The rest of the decision for a call the fast path found a candidate in
 * the simple (probability-only) mode: it was eligible and the draw fired. */
bool inject_simple_fire(struct gfp_req *req)
{
	req->call = gfp_tls.inject.calls;
	context_resolve(req);
	if (req->gfp & GFP_NOFAIL) { /* never at entry: the next eligible call instead */
		gfp_tls.inject_left = 1;
		return false;
	}
	if (stack_filter && !filter_passes())
		return false;
	return fire(req);
}

/* Calls up to and including the next one to fail: a draw per call with
 * probability p is a geometric gap between failures, drawn once per
 * injection from the same per-thread generator. */
int64_t inject_next_gap(void)
{
	double p = gfp_inject_probability;
	if (p >= 1)
		return 1;
	double g = floor(log(1.0 - inject_draw()) / log1p(-p)) + 1;
	return g < 4e18 ? (int64_t)g : INT64_MAX / 2;
}

/* An IDLE thread's countdown ran out (gfp_meaning.armed_fast): this call is the one
 * the last gap chose, if it is eligible; else the next call is. */
bool inject_countdown(struct gfp_req *req)
{
	bool eligible = !gfp_tls.guard && __atomic_load_n(&gfp_main_started, __ATOMIC_ACQUIRE) &&
	                !site_in_ldso(req->caller);
	if (eligible) {
		eligible = !(context_resolve(req) & GFP_NOFAIL); /* never at entry */
	}
	if (!eligible) {
		/* The next call instead; a gap of 0 means none was drawn yet. */
		gfp_tls.countdown = 1;
		gfp_tls.gap = gfp_tls.gap != 0;
		return false;
	}
	if (gfp_tls.gap == 0) {
		/* The thread's first eligible call: where does its first
		 * injection fall, counting this call as the first? */
		int64_t g = inject_next_gap();
		gfp_tls.inject.calls++;
		if (g > 1) {
			gfp_tls.countdown = gfp_tls.gap = g - 1;
			return false;
		}
	} else {
		gfp_tls.inject.calls += (uint64_t)gfp_tls.gap;
	}
	bool fail = inject_simple_fire(req);
	gfp_tls.countdown = gfp_tls.gap = inject_next_gap();
	return fail;
}

bool inject_should_fail(struct gfp_req *req, bool at_attempt)
{
	const struct gfp_policy *p = &gfp_policy;
	if ((p->fail_where == WHERE_ATTEMPT) != at_attempt || gfp_tls.guard || gfp_tls.in_reclaim)
		return false;
	if (!eligible(req))
		return false;
	/* A request is one eligible call, however many attempts it makes. */
	bool first = !req->call;
	if (first) {
		uint64_t tcall = ++gfp_tls.inject.calls;
		req->call =
		    process_count ? __atomic_add_fetch(&process_calls, 1, __ATOMIC_RELAXED) : tcall;
		if (count_paths) {
			bool early = before_main(), mine = in_first_thread();
			req->path = path_of_caller();
			stats_path_hit(req->path, req->call, tcall, early, mine);
		}
	}

	if (p->fail_persist && __atomic_load_n(&fired, __ATOMIC_RELAXED))
		return fire(req);
	if (p->fail_nth) /* exclusive, and once, as /proc/<pid>/fail-nth counts down */
		return first && req->call == (uint64_t)p->fail_nth ? fire(req) : false;
	if (p->fail_site.v[0] && p->fail_site_call) {
		/* The hit is known by its call number in the first thread: that
		 * call alone is unwound, and fails only if its path is the
		 * site's. Any other path there means the program ran otherwise:
		 * no failure, and gfp-sweep runs the failure point again by hit. */
		if (!first || gfp_tls.inject.calls != (uint64_t)p->fail_site_call ||
		    !in_first_thread())
			return false;
		if (!req->path)
			req->path = path_of_caller();
		return req->path == path_wanted ? fire(req) : false;
	}
	if (p->fail_site.v[0]) {
		/* Past the hit to fail, no call can fail: none is unwound. */
		if (!first ||
		    __atomic_load_n(&path_hits, __ATOMIC_RELAXED) >= (uint64_t)p->fail_site_hit)
			return false;
		if (!req->path) {
			if (!path_may_be(req->caller, path_wanted))
				return false;
			req->path = path_of_caller();
		}
		if (req->path != path_wanted)
			return false;
		uint64_t hit = __atomic_add_fetch(&path_hits, 1, __ATOMIC_RELAXED);
		return hit == (uint64_t)p->fail_site_hit ? fire(req) : false;
	}
	if (p->fail_probability <= 0)
		return false;
	if (p->fail_thread.v[0] && !thread_matches())
		return false;
	if (p->fail_times >= 0 && __atomic_load_n(&times_left, __ATOMIC_RELAXED) <= 0)
		return false;
	/* space > size: space -= size, no injection (should_fail_ex). */
	int64_t space = __atomic_load_n(&space_left, __ATOMIC_RELAXED);
	while (space > (int64_t)req->size) {
		if (__atomic_compare_exchange_n(&space_left, &space, space - (int64_t)req->size,
		                                false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return false;
	}
	if (p->fail_interval > 1 &&
	    __atomic_add_fetch(&interval_count, 1, __ATOMIC_RELAXED) % (uint64_t)p->fail_interval)
		return false;
	if (inject_draw() >= p->fail_probability)
		return false;
	if (stack_filter && !filter_passes())
		return false;
	return fire(req);
}

void inject_atfork_child(void)
{
	/* The child counts its own calls; the parent's sequence is not its. */
	__atomic_store_n(&process_calls, 0, __ATOMIC_RELAXED);
	gfp_tls.inject.calls = 0;
	gfp_tls.inject.initial = 1; /* the forking thread is the child's only one */
}
