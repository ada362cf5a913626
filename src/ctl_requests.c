/*
 * ctl_requests.c - what the control socket's requests do (ctl.c reads them
 * and says what the protocol is): get, set, report and status, each
 * answered on the client's socket without blocking, within the deadline
 * ctl.c gives the reply.
 */
#include <jemalloc/jemalloc.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "apply.h"
#include "budget_wait.h"
#include "cgroup.h"
#include "ctl_requests.h"
#include "vmstat.h"
#include "mapped.h"
#include "sys.h"

/* The reply to the request being served: non-blocking sends, and a client
 * that does not take it by reply_deadline gets no more of it. */
static int reply_fd = -1;
static int64_t reply_deadline;
static bool reply_failed;

int64_t ctl_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void reply(int fd, const char *s, size_t n)
{
	while (n && !reply_failed) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			s += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		int64_t left = reply_deadline - ctl_now_ms();
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && left > 0) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			poll(&p, 1, (int)left); /* EINTR: the deadline is looked at again */
			continue;
		}
		reply_failed = true;
	}
}

void ctl_reply_begin(int fd, int64_t deadline)
{
	reply_fd = fd;
	reply_deadline = deadline;
	reply_failed = false;
}

void ctl_replyf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = gfp_vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		reply(reply_fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void get(int fd, const char *key)
{
	char line[512];
	bool found = false;
	if (gfp_tree_on)
		budget_tree_sync(); /* limit= as the tree has it, whichever member set it */
	for (size_t i = 0; i < GFP_KEY_COUNT; i++) {
		if (*key && strcmp(key, gfp_keys[i].name) != 0)
			continue;
		struct gfp_buf b = {line, sizeof(line), 0};
		gfp_buf_printf(&b, "%s=", gfp_keys[i].name);
		config_format_value(&gfp_keys[i], &gfp_policy, &b);
		gfp_buf_printf(&b, "\n");
		reply(fd, line, b.len);
		found = true;
	}
	if (!*key || strcmp(key, "rules") == 0) {
		/* As long as the rules are: not through replyf's line buffer. */
		const char *rules = rules_text();
		reply(fd, "rules=", 6);
		reply(fd, rules, strlen(rules));
		reply(fd, "\n", 1);
		found = true;
	}
	if (!found) {
		const char *near = config_did_you_mean(key, strlen(key));
		ctl_replyf(
		    GFP_CTL_ERROR "unknown key '%s'%s%s%s (gfp-run --list-keys lists them)\n", key,
		    near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
	}
}

/* Keys whose machinery is set up at start-up, or not at all. */
static const char *frozen(const struct gfp_policy *next)
{
	const struct gfp_policy *p = &gfp_policy;
	if ((next->limit != 0) != (p->limit != 0))
		return "limit= can change at run time but not be turned on or off (start the "
		       "process with a limit)";
	if ((next->limit == GFP_SIZE_WORD) != (p->limit == GFP_SIZE_WORD))
		return "limit=cgroup is chosen at start-up: a process that follows its cgroup "
		       "keeps following it, one with a size keeps a size";
	if (next->stats != p->stats)
		return "stats= cannot change at run time (counts would start in the middle)";
	if (next->reserve_mode != p->reserve_mode ||
	    next->reserve_prefault != p->reserve_prefault ||
	    next->reserve_thread != p->reserve_thread)
		return "reserve.* cannot change at run time";
	if (next->ctl != p->ctl)
		return "ctl cannot change at run time";
	if (next->limit_scope != p->limit_scope)
		return "limit.scope cannot change at run time (a process joins a tree as it "
		       "starts)";
	return NULL;
}

/* What the parser finds wrong with a set, every message of it (one
 * request at a time: the listener is one thread). */
static struct gfp_buf set_errors;

static void set_error(const char *msg)
{
	gfp_buf_printf(&set_errors, GFP_CTL_ERROR "%s\n", msg);
}

/* GFP_RULES is read once, at start-up: `get` shows it, `set` refuses it. */
static bool sets_rules(const char *text)
{
	for (const char *c = text; c; c = strchr(c, ';')) {
		c += strspn(c, "; \t");
		if (strncmp(c, "rules", 5) != 0)
			continue;
		const char *after = c + 5;
		while (*after == ' ' || *after == '\t')
			after++;
		if (*after == '=')
			return true;
	}
	return false;
}

static void set(int fd, const char *text)
{
	static struct gfp_policy next;
	static char errors[4096];
	if (sets_rules(text)) {
		ctl_replyf(GFP_CTL_NOT_APPLIED "rules cannot change at run time (GFP_RULES is read "
		                               "at start-up)\n");
		return;
	}
	struct gfp_cfg_err err = {0};
	if (gfp_tree_on)
		budget_tree_sync(); /* keys the set leaves alone keep the tree's values */
	next = gfp_policy;
	set_errors = (struct gfp_buf){errors, sizeof(errors), 0};
	if (config_parse(&next, "gfp-ctl set", text, strlen(text), false, set_error, &err)) {
		reply(fd, errors, set_errors.len);
		return;
	}
	/* Keys that cannot change now are not applied (exit 1); else a
	 * contradiction is a bad value, as at start-up (exit 125). */
	const char *why = frozen(&next);
	if (why) {
		ctl_replyf(GFP_CTL_NOT_APPLIED "%s\n", why);
		return;
	}
	size_t drop;
	why = config_contradiction(&next, &drop);
	if (why) {
		ctl_replyf(GFP_CTL_ERROR "gfp-ctl set: %s\n", why);
		return;
	}
	/* Nothing is injected while the keys change under the threads. */
	__atomic_store_n(&gfp_meaning.inject, false, __ATOMIC_RELEASE);
	bool new_limit = next.limit != gfp_policy.limit;
	gfp_policy = next;
	apply_policy();
	if (gfp_tree_on && new_limit)
		tree_limit_set((int64_t)gfp_policy.limit); /* every member's limit */
	__atomic_add_fetch(&gfp_policy_gen, 1, __ATOMIC_ACQ_REL);
	thread_poke_all();
	budget_wait_wake(); /* a raised limit: waiting requests try again now */
	char quoted[512];
	gfp_log(GFP_LOG_INFO, "gfp-ctl set %s",
	        gfp_quote(quoted, sizeof(quoted), text, strlen(text)));
	reply(fd, "ok\n", 3);
}

static void report(int fd)
{
	static struct gfp_entry_stats s[GFP_ENTRY_COUNT];
	size_t cap = GFP_REPORT_MAX;
	char *text =
	    sys_mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (text == MAP_FAILED) {
		ctl_replyf(GFP_CTL_ERROR "no memory for the report\n");
		return;
	}
	struct gfp_buf b = {text, cap, 0};
	stats_format(&b, s);
	reply(fd, text, b.len);
	sys_munmap(text, cap);
}

/* jemalloc's count of name (stats.allocated, stats.resident), fresh. */
static long long jemalloc_stat(const char *name)
{
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch), v = 0;
	mallctl("epoch", &epoch, &sz, &epoch, sz);
	sz = sizeof(v);
	return mallctl(name, &v, &sz, NULL, 0) == 0 ? (long long)v : -1;
}

/* The numbers of the oom report's Mem-Info, raw (gfp-ctl shows them). */
static void status(int fd)
{
	char text[4096]; /* every number at its longest */
	struct gfp_buf b = {text, sizeof(text), 0};
	if (gfp_tree_on)
		budget_tree_sync(); /* the tree's limit, whichever member set it */
	int64_t limit = gfp_budget_on ? budget_limit() : 0;
	gfp_buf_printf(&b, "{\"pid\":%d,\"threads\":%u,\"limit\":%lld", (int)getpid(),
	               thread_count(), (long long)limit);
	if (gfp_budget_on) {
		int64_t live = budget_live();
		gfp_buf_printf(&b, ",\"limit_from\":\"%s\",\"scope\":\"%s\",\"live\":%lld",
		               gfp_cgroup_on ? "cgroup" : "policy",
		               gfp_tree_on ? "tree" : "process", (long long)live);
		if (gfp_tree_on)
			gfp_buf_printf(&b, ",\"process_live\":%lld",
			               (long long)budget_process_live());
		gfp_buf_printf(
		    &b, ",\"free\":%lld,\"min_free\":%lld,\"reserved\":%lld,\"waiting\":%d",
		    (long long)(limit > live ? limit - live : 0), (long long)budget_min_free(),
		    (long long)budget_reserved(), __atomic_load_n(&gfp_waiters, __ATOMIC_RELAXED));
	}
	gfp_buf_printf(&b, ",\"allocated\":%lld,\"resident\":%lld",
	               jemalloc_stat("stats.allocated"), jemalloc_stat("stats.resident"));
	mapped_report(&b);
	vmstat_report(&b);
	gfp_buf_printf(&b, "}\n");
	reply(fd, text, b.len);
}

void ctl_serve(char *req, size_t len, bool refused)
{
	int fd = reply_fd;
	/* The request is read even from a stranger: closing on unread data
	 * would reset the connection before the refusal arrives. */
	if (refused) {
		ctl_replyf(GFP_CTL_REFUSED "only uid %u may control this process\n",
		           (unsigned)geteuid());
		return;
	}
	/* Whole or not at all: nothing behind the first line, no NUL in it
	 * (the parsers would stop there and apply the part before). */
	char *nl = memchr(req, '\n', len);
	size_t line = nl ? (size_t)(nl - req) : len;
	if (nl && line + 1 < len) {
		ctl_replyf(GFP_CTL_ERROR "one request per connection: %zu bytes after the first "
		                         "line (nothing done)\n",
		           len - line - 1);
		return;
	}
	const char *nul = memchr(req, '\0', line);
	if (nul) {
		ctl_replyf(GFP_CTL_ERROR "a NUL byte in the request, at byte %zu (nothing done)\n",
		           (size_t)(nul - req));
		return;
	}
	req[line] = '\0';
	char *arg = strchr(req, ' ');
	if (arg)
		*arg++ = '\0';
	else
		arg = req + strlen(req);
	while (*arg == ' ')
		arg++;
	if (strcmp(req, "get") == 0)
		get(fd, arg);
	else if (strcmp(req, "set") == 0 && *arg)
		set(fd, arg);
	else if (strcmp(req, "report") == 0)
		report(fd);
	else if (strcmp(req, "status") == 0)
		status(fd);
	else
		ctl_replyf(
		    GFP_CTL_ERROR
		    "unknown request '%.64s' (get [KEY], set KEY=VALUE;..., report, status)\n",
		    req);
}
