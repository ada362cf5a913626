/*
 * cgroup.c - limit=cgroup: the budget follows the memory cgroup the process
 * is in, so that its requests loop, fail or reach the OOM step before the
 * cgroup's own OOM killer picks a victim.
 *
 * The cgroup is found once, at start-up, from /proc/self/cgroup and
 * /proc/self/mountinfo: cgroup v2 when the process's v2 cgroup has the
 * memory controller (memory.max, memory.high, memory.current,
 * memory.events), else the v1 memory hierarchy (memory.limit_in_bytes,
 * memory.usage_in_bytes, memory.failcnt, memory.oom_control). The figures
 * are read only where the budget looks anyway, each rate-limited: near the
 * watermark (once a millisecond at most), at a thread's allowance grant
 * (every 100 ms, or when live bytes moved by an eighth of the room left: a
 * neighbour that grew while this process was far from its watermark is
 * seen before it gets there), after reclaim, and in reports. Never per call. Reading allocates
 * nothing: open, read and close into stack buffers, errno kept.
 *
 * What the process may hold: at each level from its cgroup up to the
 * hierarchy's mount that has a limit (v2: the lower of memory.max and
 * memory.high, above which the kernel throttles), that limit less what the
 * level uses - other processes, page cache, kernel memory, jemalloc's
 * dirty pages - counting this process's own heap as room. The smallest such
 * room plus the process's own share is the budget's limit. The own share
 * is its live heap bytes, but at most its anonymous resident memory: a
 * block allocated and not touched yet is not in the cgroup's usage, and
 * will be.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "cgroup.h"

bool gfp_cgroup_on;

#define CG_PATH   512
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
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
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

/* One level's limit: v2 the lower of memory.max and memory.high. */
static int64_t level_limit(size_t len)
{
	if (cg.version == 1)
		return read_figure(len, "memory.limit_in_bytes");
	int64_t max = read_figure(len, "memory.max"), high = read_figure(len, "memory.high");
	if (max < 0)
		return high;
	return high >= 0 && high < max ? high : max;
}

static int64_t level_usage(size_t len)
{
	return read_figure(len, cg.version == 1 ? "memory.usage_in_bytes" : "memory.current");
}

struct figures {
	int64_t limit, usage; /* at the level with the least room */
	unsigned level;       /* index into cg.len */
	bool limited;         /* some level has a limit */
};

static bool read_figures(struct figures *f)
{
	*f = (struct figures){0};
	int64_t best = INT64_MAX;
	for (unsigned i = 0; i < cg.levels; i++) {
		int64_t limit = level_limit(cg.len[i]);
		if (limit < 0 || limit >= CG_UNLIMITED)
			continue;
		int64_t usage = level_usage(cg.len[i]);
		if (usage < 0)
			continue;
		if (limit - usage < best) {
			best = limit - usage;
			*f = (struct figures){limit, usage, i, true};
		}
	}
	return f->limited;
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

/* The process's own share of the cgroup's usage: see the file head. */
static int64_t own_share(void)
{
	int64_t live = budget_live(), anon = anon_resident();
	if (live < 0)
		live = 0;
	return live < anon ? live : anon;
}

/* What the cgroup leaves this process: its room plus its own share, less
 * a headroom of 1 % of the limit (256 KiB at least) for what the cgroup
 * charges between two looks without this process asking: page tables,
 * jemalloc's metadata, the kernel's per-CPU charge batches, a neighbour's
 * growth. The budget's own min_free comes on top, as a fraction of what is
 * left to this process. */
static int64_t budget_from(const struct figures *f, int64_t own)
{
	int64_t headroom = f->limit / 100 > 256 * 1024 ? f->limit / 100 : 256 * 1024;
	int64_t b = f->limit - f->usage + own - headroom;
	return b < 64 * 1024 ? 64 * 1024 : b;
}

int64_t cgroup_budget_now(void)
{
	struct figures f;
	if (read_figures(&f))
		__atomic_store_n(&last_budget, budget_from(&f, own_share()), __ATOMIC_RELAXED);
	return __atomic_load_n(&last_budget, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * Following the cgroup
 * ---------------------------------------------------------------------- */

/* One look at a time; a change smaller than a batch (a thousandth of the
 * limit) is left alone unless `force`: each change takes every allowance
 * back. */
static void refresh(bool force)
{
	if (__atomic_exchange_n(&refreshing, 1, __ATOMIC_ACQUIRE))
		return; /* another thread is reading the same figures */
	gfp_tls.guard++;
	__atomic_store_n(&seen_folded, __atomic_load_n(&gfp_budget.folded, __ATOMIC_RELAXED),
	                 __ATOMIC_RELAXED);
	int64_t old = budget_limit(), now = cgroup_budget_now(), d = now - old;
	if (old && (force || d > gfp_budget.batch || -d > gfp_budget.batch))
		budget_follow_limit(now);
	gfp_tls.guard--;
	__atomic_store_n(&refreshing, 0, __ATOMIC_RELEASE);
}

static bool due(uint64_t *when, uint64_t now, uint64_t period)
{
	uint64_t t = __atomic_load_n(when, __ATOMIC_RELAXED);
	return now >= t && __atomic_compare_exchange_n(when, &t, now + period, false,
	                                               __ATOMIC_RELAXED, __ATOMIC_RELAXED);
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
		refresh(false);
}

void cgroup_near(void)
{
	if (!gfp_cgroup_on)
		return;
	uint64_t now = gfp_now_ns();
	if (due(&next_near, now, NEAR_NS)) {
		__atomic_store_n(&next_far, now + FAR_NS, __ATOMIC_RELAXED);
		refresh(false);
	}
}

/* Reclaim purged jemalloc's dirty pages: the cgroup's usage fell. */
void cgroup_after_reclaim(void)
{
	if (gfp_cgroup_on)
		refresh(true);
}

void cgroup_show_mem(struct gfp_buf *b, const char *prefix)
{
	struct figures f;
	if (!gfp_cgroup_on || !read_figures(&f))
		return;
	char h[4][GFP_HUMAN_LEN], text[CG_FILE];
	size_t len = cg.len[f.level];
	int64_t own = own_share();
	gfp_buf_printf(b, "\n%sMem-Info: cgroup v%d ", prefix, cg.version);
	gfp_buf_quote(b, cg.dir, len);
	gfp_buf_printf(b, " limit:%s usage:%s own:%s others:%s", gfp_human_size(h[0], f.limit),
	               gfp_human_size(h[1], f.usage), gfp_human_size(h[2], own),
	               gfp_human_size(h[3], f.usage > own ? f.usage - own : 0));
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

/* Field i (0-based, space-separated) of a line: its start and length. */
static bool field(const char *line, size_t len, unsigned i, const char **f, size_t *fl)
{
	size_t p = 0;
	for (unsigned k = 0; k < i; k++) {
		const char *sp = memchr(line + p, ' ', len - p);
		if (!sp)
			return false;
		p = (size_t)(sp - line) + 1;
	}
	const char *sp = memchr(line + p, ' ', len - p);
	*f = line + p;
	*fl = sp ? (size_t)(sp - (line + p)) : len - p;
	return true;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static size_t unescape(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3') {
			out[o++] =
			    (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return o;
}

static bool has_word(const char *list, size_t n, const char *word)
{
	size_t wl = strlen(word);
	for (size_t i = 0; i < n;) {
		const char *comma = memchr(list + i, ',', n - i);
		size_t end = comma ? (size_t)(comma - list) : n;
		if (end - i == wl && memcmp(list + i, word, wl) == 0)
			return true;
		i = end + 1;
	}
	return false;
}

bool cgroup_mount_dir(const char *line, size_t len, bool v2, const char *path, char *out,
                      size_t cap)
{
	/* id parent major:minor root mountpoint options [optional...] - fstype
	 * source superoptions */
	const char *root, *mnt, *f;
	size_t rl, ml, fl;
	if (!field(line, len, 3, &root, &rl) || !field(line, len, 4, &mnt, &ml))
		return false;
	unsigned i = 6;
	while (field(line, len, i, &f, &fl) && !(fl == 1 && *f == '-'))
		i++;
	const char *type, *super;
	size_t tl, sl;
	if (!field(line, len, i + 1, &type, &tl) || !field(line, len, i + 3, &super, &sl))
		return false;
	if (v2 ? !(tl == 7 && memcmp(type, "cgroup2", 7) == 0)
	       : !(tl == 6 && memcmp(type, "cgroup", 6) == 0 && has_word(super, sl, "memory")))
		return false;
	char r[CG_PATH];
	size_t n = unescape(r, sizeof(r), root, rl);
	if (n == 1 && r[0] == '/')
		n = 0; /* the hierarchy's root: every path is under it */
	size_t pl = strlen(path);
	if (pl < n || memcmp(path, r, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return false; /* the process's cgroup is not under this mount */
	size_t o = unescape(out, cap, mnt, ml);
	const char *rest = path + n;
	if (strcmp(rest, "/") == 0)
		rest = "";
	if (o + strlen(rest) + 1 > cap)
		return false;
	memcpy(out + o, rest, strlen(rest) + 1);
	return true;
}

/* The process's cgroup path in hierarchy v2 ("0::/x") or v1's memory one
 * ("4:memory:/x"), from the text of /proc/self/cgroup, into out. */
static bool cgroup_path(const char *text, bool v2, char *out, size_t cap)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *c1 = strchr(l, ':'), *nl = strchr(l, '\n');
		const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		size_t end = nl ? (size_t)(nl - l) : strlen(l);
		if (!c2 || (size_t)(c2 - l) >= end)
			continue;
		bool match = v2 ? c2 == c1 + 1 && strncmp(l, "0:", 2) == 0
		                : has_word(c1 + 1, (size_t)(c2 - c1 - 1), "memory");
		size_t pl = end - (size_t)(c2 + 1 - l);
		if (!match || pl + 1 > cap || c2[1] != '/')
			continue;
		memcpy(out, c2 + 1, pl);
		out[pl] = '\0';
		return true;
	}
	return false;
}

/* The directory of path in the hierarchy (v2 or v1 memory) that holds it,
 * from /proc/self/mountinfo read a block at a time, into out. */
static bool find_mount(bool v2, const char *path, char *out, size_t cap)
{
	static char buf[CG_FILE * 4];
	int saved = errno;
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	bool found = false;
	size_t have = 0;
	while (fd >= 0 && !found) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		size_t start = 0;
		for (char *nl; !found && (nl = memchr(buf + start, '\n', have - start));) {
			size_t ll = (size_t)(nl - (buf + start));
			found = cgroup_mount_dir(buf + start, ll, v2, path, out, cap);
			start += ll + 1;
		}
		if (start == 0 && have == sizeof(buf))
			have = 0; /* a line longer than the buffer: no mount of ours */
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	if (fd >= 0)
		close(fd);
	errno = saved;
	return found;
}

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

/* Fills cg; NULL, or why there is no memory cgroup to follow. */
static const char *find_cgroup(void)
{
	const char *text = self_cgroup();
	char path[CG_PATH];
	if (!text)
		return "/proc/self/cgroup cannot be read";
	for (int v = 2; v >= 1; v--) {
		if (!cgroup_path(text, v == 2, path, sizeof(path)) ||
		    !find_mount(v == 2, path, cg.dir, sizeof(cg.dir)))
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
		gfp_policy.limit = 0;
		return;
	}
	if (!read_figures(&f)) {
		gfp_log(GFP_LOG_WARNING,
		        "limit=cgroup: the memory cgroup %s has no limit (%s up to the hierarchy's "
		        "root): no budget (set the cgroup's limit, or set limit=SIZE)",
		        gfp_quote(q, sizeof(q), cg.dir, strlen(cg.dir)),
		        cg.version == 1 ? "memory.limit_in_bytes is unlimited"
		                        : "memory.max and memory.high are 'max'");
		gfp_policy.limit = 0;
		return;
	}
	gfp_cgroup_on = true;
	int64_t b = budget_from(&f, 0);
	__atomic_store_n(&last_budget, b, __ATOMIC_RELAXED);
	if (gfp_policy.confirm) {
		char h[3][GFP_HUMAN_LEN];
		gfp_log(GFP_LOG_INFO, "limit=cgroup: cgroup v%d %s: limit %s, usage %s: budget %s",
		        cg.version, gfp_quote(q, sizeof(q), cg.dir, cg.len[f.level]),
		        gfp_human_size(h[0], f.limit), gfp_human_size(h[1], f.usage),
		        gfp_human_size(h[2], b));
	}
}

bool cgroup_pressure_file(char *out, size_t cap)
{
	const char *text = self_cgroup();
	char path[CG_PATH];
	if (!text || !cgroup_path(text, true, path, sizeof(path)) ||
	    !find_mount(true, path, out, cap) || strlen(out) + sizeof("/memory.pressure") > cap)
		return false;
	memcpy(out + strlen(out), "/memory.pressure", sizeof("/memory.pressure"));
	return true;
}

void cgroup_atfork_child(void)
{
	__atomic_store_n(&refreshing, 0, __ATOMIC_RELAXED);
}
