/*
 * cgroup.c - limit=cgroup: the budget follows the memory cgroup the process
 * is in, as the kernel's try_charge_memcg charges it: memory.max is the
 * hard limit, where requests reclaim, retry and reach the OOM step (a memcg
 * OOM, oom.c) before the cgroup's own OOM killer picks a victim; memory.high
 * is a throttle, never a failure: a thread that charged past it reclaims,
 * then sleeps a penalty that grows with the overage, before its request
 * returns (mem_cgroup_handle_over_high).
 *
 * The cgroup is found once, at start-up, from /proc/self/cgroup and
 * /proc/self/mountinfo: cgroup v2 when the process's v2 cgroup has the
 * memory controller (memory.max, memory.high, memory.current,
 * memory.events, memory.oom.group, memory.low), else the v1 memory
 * hierarchy (memory.limit_in_bytes, memory.usage_in_bytes, memory.failcnt,
 * memory.oom_control; v1 has no memory.high). For the tests only,
 * GFP_TEST_CGROUP names a directory of v2-format files taken as the
 * process's cgroup v2 instead (one level; never in secure execution). The
 * figures are read only where the budget looks anyway, each rate-limited:
 * near the watermark (once a millisecond at most), at a thread's allowance
 * grant (every 100 ms, or when live bytes moved by an eighth of the room
 * left: a neighbour that grew while this process was far from its
 * watermark is seen before it gets there), after reclaim, and in reports.
 * Never per call. Reading allocates nothing: open, read and close into
 * stack buffers, errno kept.
 *
 * What the process may hold: at each level from its cgroup up to the
 * hierarchy's mount that has a memory.max, that limit less what the level
 * uses - other processes, page cache, kernel memory, jemalloc's dirty
 * pages - counting this process's own heap as room. The smallest such room
 * plus the process's own share is the budget's limit. The own share is its
 * live heap bytes, but at most its anonymous resident memory (a block
 * allocated and not touched yet is not in the cgroup's usage, and will be)
 * and at most the level's usage. Under limit.scope=tree the members' share
 * is the tree's: the tree's limit is what the cgroup leaves all of them,
 * and each member that looks publishes it. memory.high gives the same
 * figure for its levels: past it (the shared estimate of live bytes
 * against it), every grant and exact decision adds to the thread's debt.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "cgroup.h"
#include "vmstat.h"
#include "cgroup_find.h"

bool gfp_cgroup_on;
__thread uint64_t gfp_memcg_over_high __attribute__((tls_model("initial-exec")));

#define CG_PATH   CGROUP_FIND_PATH
#define CG_LEVELS 8 /* the nearest levels: deeper ancestors are not looked at */
#define CG_FILE   4096

/* A limit at or above this is none (v1 writes PAGE_COUNTER_MAX pages). */
#define CG_UNLIMITED ((int64_t)1 << 62)

#define FAR_NS  (100 * 1000000ULL)
#define NEAR_NS (1000000ULL)

static struct {
	int version;           /* 1 or 2 */
	char dir[CG_PATH];     /* the process's cgroup directory */
	size_t len[CG_LEVELS]; /* dir's prefixes: the cgroup, its parent, ... */
	unsigned levels;
} cg;

static int64_t last_budget;          /* atomic: the last budget read */
static int64_t high_live;            /* atomic: live bytes past which memory.high is passed */
static int64_t high_value;           /* atomic: that level's memory.high (the penalty's scale) */
static uint64_t next_far, next_near; /* atomic: when the next look is due */
static int refreshing;               /* atomic: one thread reads at a time */
static int64_t seen_folded;          /* atomic: the estimate of live bytes then */

/* ------------------------------------------------------------------------
 * Files
 * ---------------------------------------------------------------------- */

/* Reads the start of file `name` in the level of `len` bytes of cg.dir (or
 * the path itself when len is 0) into buf, NUL-terminated. */
static bool read_at(size_t len, const char *name, char *buf, size_t cap)
{
	char path[CG_PATH + 64];
	int saved = errno;
	if (len)
		gfp_snprintf(path, sizeof(path), "%.*s/%s", (int)len, cg.dir, name);
	else
		gfp_snprintf(path, sizeof(path), "%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	ssize_t n = -1;
	if (fd >= 0) {
		do
			n = read(fd, buf, cap - 1);
		while (n < 0 && errno == EINTR);
		close(fd);
	}
	errno = saved;
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* A number at the start of s, or "max": CG_UNLIMITED. -1 when neither. */
static int64_t parse_figure(const char *s)
{
	if (strncmp(s, "max", 3) == 0)
		return CG_UNLIMITED;
	if (*s < '0' || *s > '9')
		return -1;
	uint64_t v = 0;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (uint64_t)(*s++ - '0');
		if (v >= (uint64_t)CG_UNLIMITED)
			return CG_UNLIMITED;
	}
	return (int64_t)v;
}

static int64_t read_figure(size_t len, const char *name)
{
	char buf[64];
	return read_at(len, name, buf, sizeof(buf)) ? parse_figure(buf) : -1;
}

/* The value of `key` in a "key value" per line file (memory.events,
 * memory.oom_control); -1 when it is not there. */
static int64_t keyed(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, key, kl) == 0 && l[kl] == ' ')
			return parse_figure(l + kl + 1);
	return -1;
}

/* One level's hard limit: v2 memory.max, v1 memory.limit_in_bytes. */
static int64_t level_max(size_t len)
{
	return read_figure(len, cg.version == 1 ? "memory.limit_in_bytes" : "memory.max");
}

static int64_t level_usage(size_t len)
{
	return read_figure(len, cg.version == 1 ? "memory.usage_in_bytes" : "memory.current");
}

struct figures {
	int64_t limit, usage;     /* memory.max at the level with the least room */
	unsigned level;           /* index into cg.len */
	bool limited;             /* some level has a memory.max */
	int64_t high, high_usage; /* memory.high at the level with the least room; high < 0: none */
};

/* The budget of a cgroup with a memory.high and no memory.max anywhere:
 * no hard limit the shim could know of, a throttle all the same. */
#define NO_MAX_BUDGET ((int64_t)1 << 50)

/* One level's room under `limit` (a limit below 0 or unlimited: none). */
static void consider(int64_t limit, int64_t usage, int64_t *best, int64_t *l, int64_t *u)
{
	if (limit < 0 || limit >= CG_UNLIMITED || usage < 0 || limit - usage >= *best)
		return;
	*best = limit - usage;
	*l = limit;
	*u = usage;
}

static bool read_figures(struct figures *f)
{
	*f = (struct figures){.high = -1};
	int64_t best = INT64_MAX, best_high = INT64_MAX;
	for (unsigned i = 0; i < cg.levels; i++) {
		int64_t max = level_max(cg.len[i]);
		int64_t high = cg.version == 2 ? read_figure(cg.len[i], "memory.high") : -1;
		if ((max < 0 || max >= CG_UNLIMITED) && (high < 0 || high >= CG_UNLIMITED))
			continue;
		int64_t usage = level_usage(cg.len[i]), before = best;
		consider(max, usage, &best, &f->limit, &f->usage);
		if (best != before) {
			f->level = i;
			f->limited = true;
		}
		consider(high, usage, &best_high, &f->high, &f->high_usage);
	}
	return f->limited || f->high >= 0;
}

/* Anonymous resident bytes of the process (statm: resident - shared). */
static int64_t anon_resident(void)
{
	char buf[128];
	if (!read_at(0, "/proc/self/statm", buf, sizeof(buf)))
		return INT64_MAX;
	const char *p = buf;
	int64_t v[3] = {0};
	for (int i = 0; i < 3; i++) {
		v[i] = parse_figure(p);
		p = strchr(p, ' ');
		if (v[i] < 0 || !p)
			return INT64_MAX;
		p++;
	}
	return (v[1] - v[2]) * (int64_t)sysconf(_SC_PAGESIZE);
}

/* The process's own share of the cgroup's usage (its tree's, under
 * limit.scope=tree): see the file head. */
static int64_t own_share(void)
{
	int64_t live = budget_process_live(), anon = anon_resident();
	if (live < 0)
		live = 0;
	int64_t own = live < anon ? live : anon;
	return gfp_tree_on ? own + tree_others_charged() : own;
}

/* What a level's `limit` leaves the process: its room plus its own share
 * (at most the level's usage), less a headroom of 1 % of the limit (256 KiB
 * at least) for what the cgroup charges between two looks without this
 * process asking: page tables, jemalloc's metadata, the kernel's per-CPU
 * charge batches, a neighbour's growth. The budget's own min_free comes on
 * top, as a fraction of what is left to this process. */
static int64_t budget_from(int64_t limit, int64_t usage, int64_t own)
{
	int64_t headroom = limit / 100 > 256 * 1024 ? limit / 100 : 256 * 1024;
	if (own > usage)
		own = usage;
	int64_t b = limit - usage + own - headroom;
	return b < 64 * 1024 ? 64 * 1024 : b;
}

/* memory.high in live bytes, from figures `f` and the own share: none when
 * it does not come before memory.max. */
static void high_from(const struct figures *f, int64_t own, int64_t budget)
{
	int64_t live = INT64_MAX, value = 0;
	if (f->high >= 0) {
		live = budget_from(f->high, f->high_usage, own);
		value = f->high;
		if (live >= budget)
			live = INT64_MAX, value = 0;
	}
	__atomic_store_n(&high_value, value, __ATOMIC_RELAXED);
	__atomic_store_n(&high_live, live, __ATOMIC_RELAXED);
}

int64_t cgroup_budget_now(void)
{
	struct figures f;
	if (read_figures(&f)) {
		int64_t own = own_share();
		int64_t b = f.limited ? budget_from(f.limit, f.usage, own) : NO_MAX_BUDGET;
		high_from(&f, own, b);
		__atomic_store_n(&last_budget, b, __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&last_budget, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * Following the cgroup
 * ---------------------------------------------------------------------- */

/* One look at a time; a change smaller than a batch (a thousandth of the
 * limit) is left alone unless `force`: each change takes every allowance
 * back. A tree's member publishes the tree's new limit: without the tree's
 * lock, as it may look from inside a request that must not block. */
void cgroup_refresh(bool force)
{
	if (__atomic_exchange_n(&refreshing, 1, __ATOMIC_ACQUIRE))
		return; /* another thread is reading the same figures */
	gfp_tls.guard++;
	__atomic_store_n(&seen_folded, __atomic_load_n(&gfp_budget.folded, __ATOMIC_RELAXED),
	                 __ATOMIC_RELAXED);
	int64_t old = budget_limit(), now = cgroup_budget_now(), d = now - old;
	if (old && (force || d > gfp_budget.batch || -d > gfp_budget.batch)) {
		if (gfp_tree_on)
			tree_limit_follow(now);
		budget_follow_limit(now);
	}
	gfp_tls.guard--;
	__atomic_store_n(&refreshing, 0, __ATOMIC_RELEASE);
}

static bool due(uint64_t *when, uint64_t now, uint64_t period)
{
	uint64_t t = __atomic_load_n(when, __ATOMIC_RELAXED);
	return now >= t && __atomic_compare_exchange_n(when, &t, now + period, false,
	                                               __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* What the shared estimate of live bytes stands past memory.high. */
static int64_t over_high_est(void)
{
	int64_t live = __atomic_load_n(&high_live, __ATOMIC_RELAXED);
	return live == INT64_MAX ? 0 : budget_estimate() - live;
}

/* The thread's own live bytes at its last look. */
static __thread int64_t seen_own __attribute__((tls_model("initial-exec")));

/* try_charge_memcg's done_restock: what the task charged while past
 * memory.high adds to its debt (memcg_nr_pages_over_high), paid before the
 * request returns: here, what the thread's live bytes grew by since its
 * last look (a grant, an exact decision), a batch at least. */
static void charge_over_high(void)
{
	struct gfp_thread *t = gfp_tls.thread;
	int64_t own = t && t->allocp ? budget_own_live(t) : 0, grew = own - seen_own;
	seen_own = own;
	if (unlikely(over_high_est() > 0))
		gfp_memcg_over_high +=
		    (uint64_t)(grew > gfp_budget.batch ? grew : gfp_budget.batch);
}

/* Far from the watermark: every 100 ms, and whenever the estimate of live
 * bytes moved by an eighth of the room left since the last look. What the
 * rest of the cgroup uses grows with this process too (jemalloc's metadata,
 * page tables: some 10 % of 4 KiB blocks), so a fast fill looks more often
 * the closer it gets. */
void cgroup_tick(void)
{
	if (!gfp_cgroup_on)
		return;
	int64_t est = __atomic_load_n(&gfp_budget.folded, __ATOMIC_RELAXED);
	int64_t moved = est - __atomic_load_n(&seen_folded, __ATOMIC_RELAXED);
	int64_t room = budget_limit() - est;
	if (moved < 0)
		moved = -moved;
	if ((moved > gfp_budget.batch && moved > room / 8) || due(&next_far, gfp_now_ns(), FAR_NS))
		cgroup_refresh(false);
	charge_over_high();
}

void cgroup_near(void)
{
	if (!gfp_cgroup_on)
		return;
	uint64_t now = gfp_now_ns();
	if (due(&next_near, now, NEAR_NS)) {
		__atomic_store_n(&next_far, now + FAR_NS, __ATOMIC_RELAXED);
		cgroup_refresh(false);
	}
	charge_over_high();
}

/* Reclaim purged jemalloc's dirty pages: the cgroup's usage fell. */
void cgroup_after_reclaim(void)
{
	if (gfp_cgroup_on)
		cgroup_refresh(true);
}

void cgroup_direct_reclaimed(const struct gfp_req *req, size_t freed)
{
	(void)freed;
	/* try_charge_memcg raises MEMCG_MAX before each reclaim of a charge
	 * that may block; a budget of limit=SIZE counts its own limit so. */
	if (req->why == GFP_WHY_BUDGET)
		vmstat_memcg_event(GFP_MEMCG_MAX);
	if (!gfp_cgroup_on)
		return;
	cgroup_refresh(true);
	/* memory.low breached: reclaimed while at or under its protection
	 * (mem_cgroup_calculate_protection's MEMCG_LOW). */
	if (cg.version == 2) {
		int64_t low = read_figure(cg.len[0], "memory.low");
		int64_t usage = level_usage(cg.len[0]);
		if (low > 0 && low < CG_UNLIMITED && usage >= 0 && usage <= low)
			vmstat_memcg_event(GFP_MEMCG_LOW);
	}
}

int64_t cgroup_throttle_at(int64_t *value)
{
	*value = __atomic_load_n(&high_value, __ATOMIC_RELAXED);
	return __atomic_load_n(&high_live, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * The memcg OOM and reports
 * ---------------------------------------------------------------------- */

bool cgroup_oom_group(void)
{
	struct figures f;
	if (!gfp_cgroup_on || cg.version != 2 || !read_figures(&f))
		return false;
	/* mem_cgroup_get_oom_group: the highest level up to the OOM's own
	 * with memory.oom.group set takes the whole group along. */
	for (unsigned i = 0; i <= f.level && i < cg.levels; i++)
		if (read_figure(cg.len[i], "memory.oom.group") == 1)
			return true;
	return false;
}

void cgroup_show_mem(struct gfp_buf *b, const char *prefix)
{
	struct figures f;
	if (!gfp_cgroup_on || !read_figures(&f))
		return;
	char h[5][GFP_HUMAN_LEN], text[CG_FILE];
	size_t len = cg.len[f.level];
	if (!f.limited) /* memory.high alone: its level's figures */
		f.limit = CG_UNLIMITED, f.usage = f.high_usage;
	int64_t own = own_share();
	if (own > f.usage)
		own = f.usage;
	gfp_buf_printf(b, "\n%sMem-Info: cgroup v%d ", prefix, cg.version);
	gfp_buf_quote(b, cg.dir, len);
	gfp_buf_printf(b, " limit:%s usage:%s own:%s others:%s",
	               f.limited ? gfp_human_size(h[0], f.limit) : "max",
	               gfp_human_size(h[1], f.usage), gfp_human_size(h[2], own),
	               gfp_human_size(h[3], f.usage > own ? f.usage - own : 0));
	if (__atomic_load_n(&high_value, __ATOMIC_RELAXED))
		gfp_buf_printf(
		    b, " high:%s",
		    gfp_human_size(h[4], __atomic_load_n(&high_value, __ATOMIC_RELAXED)));
	/* How often the kernel hit the limit, and whether it killed. */
	if (cg.version == 2 && read_at(len, "memory.events", text, sizeof(text))) {
		gfp_buf_printf(b, " events: high:%lld max:%lld oom:%lld oom_kill:%lld",
		               (long long)keyed(text, "high"), (long long)keyed(text, "max"),
		               (long long)keyed(text, "oom"), (long long)keyed(text, "oom_kill"));
	} else if (cg.version == 1) {
		int64_t failcnt = read_figure(len, "memory.failcnt"), kills = -1;
		if (read_at(len, "memory.oom_control", text, sizeof(text)))
			kills = keyed(text, "oom_kill");
		gfp_buf_printf(b, " failcnt:%lld oom_kill:%lld", (long long)failcnt,
		               (long long)kills);
	}
}

/* ------------------------------------------------------------------------
 * Finding the cgroup (start-up only)
 * ---------------------------------------------------------------------- */

/* The levels from the cgroup up to (and with) the mount's own directory,
 * nearest first. */
static void find_levels(size_t mount_len)
{
	size_t l = strlen(cg.dir);
	cg.levels = 0;
	for (;;) {
		cg.len[cg.levels++] = l;
		if (l <= mount_len || cg.levels == CG_LEVELS)
			break;
		while (l > mount_len && cg.dir[l - 1] != '/')
			l--;
		if (l > mount_len)
			l--; /* the slash */
	}
}

static bool exists(size_t len, const char *name)
{
	char buf[8];
	return read_at(len, name, buf, sizeof(buf));
}

/* The text of /proc/self/cgroup; false when it cannot be read. */
static const char *self_cgroup(void)
{
	static char text[CG_FILE * 2];
	return read_at(0, "/proc/self/cgroup", text, sizeof(text)) ? text : NULL;
}

/* GFP_TEST_CGROUP, for the tests only: a directory of v2-format files
 * (memory.max, memory.high, memory.current, ...) taken as the process's
 * cgroup v2, one level, where no cgroup v2 with the memory controller can
 * be had. Never in secure execution. */
static const char *test_cgroup(void)
{
	const char *dir = secure_getenv("GFP_TEST_CGROUP");
	if (!dir || !*dir)
		return NULL;
	size_t l = strlen(dir);
	if (l >= sizeof(cg.dir))
		return "GFP_TEST_CGROUP is too long";
	memcpy(cg.dir, dir, l + 1);
	cg.version = 2;
	cg.levels = 1;
	cg.len[0] = l;
	if (exists(l, "memory.current"))
		return "";
	cg.version = 0;
	return "GFP_TEST_CGROUP names no directory with a memory.current";
}

/* Fills cg; NULL, or why there is no memory cgroup to follow. */
static const char *find_cgroup(void)
{
	const char *why = test_cgroup();
	if (why)
		return *why ? why : NULL;
	const char *text = self_cgroup();
	char path[CG_PATH];
	if (!text)
		return "/proc/self/cgroup cannot be read";
	for (int v = 2; v >= 1; v--) {
		if (!cgroup_find_path(text, v == 2, path, sizeof(path)) ||
		    !cgroup_find_mount(v == 2, path, cg.dir, sizeof(cg.dir)))
			continue;
		cg.version = v;
		size_t dl = strlen(cg.dir), pl = strcmp(path, "/") == 0 ? 0 : strlen(path);
		find_levels(dl - pl);
		if (exists(dl, v == 2 ? "memory.current" : "memory.usage_in_bytes"))
			return NULL;
	}
	cg.version = 0;
	return "no memory cgroup to follow (the process's cgroup v2 has no memory controller, "
	       "and no cgroup v1 memory hierarchy is mounted for it)";
}

/* No cgroup to follow: no budget, and a tree joined for it is left. */
static void cgroup_no_budget(void)
{
	gfp_policy.limit = 0;
	if (gfp_tree_on) {
		tree_leave();
		gfp_tree_on = false;
	}
}

void cgroup_resolve_policy(void)
{
	if (gfp_policy.limit != GFP_SIZE_WORD)
		return;
	const char *why = find_cgroup();
	char q[CG_PATH * 4];
	struct figures f;
	if (why) {
		gfp_log(GFP_LOG_WARNING,
		        "limit=cgroup: %s: no budget (run the process in a memory cgroup with a "
		        "limit, or set limit=SIZE)",
		        why);
		cgroup_no_budget();
		return;
	}
	if (!read_figures(&f)) {
		gfp_log(GFP_LOG_WARNING,
		        "limit=cgroup: the memory cgroup %s has no limit (%s up to the hierarchy's "
		        "root): no budget (set the cgroup's limit, or set limit=SIZE)",
		        gfp_quote(q, sizeof(q), cg.dir, strlen(cg.dir)),
		        cg.version == 1 ? "memory.limit_in_bytes is unlimited"
		                        : "memory.max and memory.high are 'max'");
		cgroup_no_budget();
		return;
	}
	gfp_cgroup_on = true;
	int64_t own = gfp_tree_on ? tree_others_charged() : 0;
	int64_t b = f.limited ? budget_from(f.limit, f.usage, own) : NO_MAX_BUDGET;
	high_from(&f, own, b);
	__atomic_store_n(&last_budget, b, __ATOMIC_RELAXED);
	if (gfp_tree_on)
		tree_limit_follow(b); /* what the cgroup leaves the whole tree */
	if (gfp_policy.confirm) {
		char h[4][GFP_HUMAN_LEN];
		int64_t hv = __atomic_load_n(&high_value, __ATOMIC_RELAXED);
		gfp_log(GFP_LOG_INFO,
		        "limit=cgroup: cgroup v%d %s: memory.max %s, memory.high %s, usage %s: "
		        "budget %s",
		        cg.version, gfp_quote(q, sizeof(q), cg.dir, cg.len[f.level]),
		        f.limited ? gfp_human_size(h[0], f.limit) : "max",
		        hv ? gfp_human_size(h[1], hv) : "max",
		        gfp_human_size(h[2], f.limited ? f.usage : f.high_usage),
		        gfp_human_size(h[3], b));
	}
}

bool cgroup_pressure_file(char *out, size_t cap)
{
	const char *text = self_cgroup();
	char path[CG_PATH];
	if (!text || !cgroup_find_path(text, true, path, sizeof(path)) ||
	    !cgroup_find_mount(true, path, out, cap) ||
	    strlen(out) + sizeof("/memory.pressure") > cap)
		return false;
	memcpy(out + strlen(out), "/memory.pressure", sizeof("/memory.pressure"));
	return true;
}

void cgroup_atfork_child(void)
{
	__atomic_store_n(&refreshing, 0, __ATOMIC_RELAXED);
	/* The child charged nothing yet: the parent's debt stays the parent's. */
	gfp_memcg_over_high = 0;
	seen_own = 0;
}
