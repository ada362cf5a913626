/*
 * ctl.c - runtime control (ctl=1): a unix socket gfp-ctl talks to, to read
 * the policy, change it (the same keys and validation as GFP_POLICY) and
 * take the statistics now.
 *
 * The socket lives in a directory only the process's user can enter
 * ($XDG_RUNTIME_DIR/gfpshim, else /tmp/gfpshim-UID, mode 0700), and the
 * listener also checks the peer's uid (SO_PEERCRED). A directory that is
 * not the process's own (another owner, open to others, a symlink) or a
 * path that would not fit stops the program before main with exit 125, as
 * a bad GFP_POLICY does: ctl=1 never quietly goes without its socket.
 *
 * The listener is one thread with every signal blocked, started when
 * main() starts, whose allocations never go through the policy (its guard
 * stays raised); its buffers are mmap'ed. It reads up to CTL_CLIENTS
 * connections at once without blocking, each against its own deadline, and
 * serves a request once its line is whole: a slow client delays no other.
 * Nothing listens in secure execution.
 *
 * A `set` is parsed into a copy of the policy and checked whole; only then
 * is it copied in, injection off while that happens, and what the keys make
 * of the process derived again (apply.c: apply_policy). Threads that are idle look
 * again at their next allocation: their countdown is set to 0 (thread.c).
 * Keys whose machinery must exist from the start (a budget on or off,
 * reservations, statistics) are refused, with the reason.
 *
 * Protocol: one request line, one reply, then the connection closes. The
 * line must arrive whole (newline included) within CTL_READ_MS of the
 * connection; one with a NUL byte, more after it, or longer than
 * CTL_REQ_MAX is refused whole ("error: ...").
 *   get            every key as key=value, one per line, then rules=...
 *   get KEY        that key
 *   set K=V;K=V    "ok", or "error: ..." (nothing applied)
 *   report         the GFP_REPORT JSON as of now
 *   status         the budget as it stands, one JSON line of raw numbers:
 *                  pid, threads, limit (0: none), and under a limit
 *                  limit_from, scope, live, process_live (a tree), free,
 *                  min_free, reserved, waiting; jemalloc's allocated and
 *                  resident; and the report's mapped (a part of live),
 *                  vmstat, memory_events, tree_memory_events and
 *                  memory_high where it has them. gfp-ctl prints it for people.
 */
#include <dlfcn.h>
#include <jemalloc/jemalloc.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "fd.h"
#include "budget_wait.h"
#include "cgroup.h"
#include "kswapd.h"
#include "mapped.h"
#include "sys.h"
#include "apply.h"

static int listen_fd = -1;
static pid_t owner;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

/* ------------------------------------------------------------------------
 * Requests
 * ---------------------------------------------------------------------- */

/* The reply to the request being served: non-blocking sends, and a client
 * that does not take it by reply_deadline gets no more of it. */
static int64_t reply_deadline;
static bool reply_failed;

static int64_t now_ms(void)
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
		int64_t left = reply_deadline - now_ms();
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && left > 0) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			poll(&p, 1, (int)left); /* EINTR: the deadline is looked at again */
			continue;
		}
		reply_failed = true;
	}
}

static void replyf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void replyf(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = gfp_vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		reply(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
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
		replyf(fd,
		       GFP_CTL_ERROR "unknown key '%s'%s%s%s (gfp-run --list-keys lists them)\n",
		       key, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
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
		replyf(fd, GFP_CTL_NOT_APPLIED "rules cannot change at run time (GFP_RULES is read "
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
		replyf(fd, GFP_CTL_NOT_APPLIED "%s\n", why);
		return;
	}
	size_t drop;
	why = config_contradiction(&next, &drop);
	if (why) {
		replyf(fd, GFP_CTL_ERROR "gfp-ctl set: %s\n", why);
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
		replyf(fd, GFP_CTL_ERROR "no memory for the report\n");
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

/* ------------------------------------------------------------------------
 * Clients: each read without blocking, against its own deadline, so that
 * one that sends slowly (or not at all) holds up no other; a request is
 * served once its line is whole, all at once.
 * ---------------------------------------------------------------------- */

#define CTL_CLIENTS  8           /* connections read at the same time */
#define CTL_REQ_MAX  (64 * 1024) /* a request, newline included */
#define CTL_READ_MS  1000        /* the whole request, from the connection */
#define CTL_REPLY_MS 2000        /* the whole reply taken by the client */

struct client {
	int fd;       /* -1: a free slot */
	bool refused; /* another uid: read, then refused */
	size_t len;
	int64_t deadline;
	char *req; /* CTL_REQ_MAX + 1 bytes */
};

static struct client clients[CTL_CLIENTS];

static void serve(struct client *c)
{
	int fd = c->fd;
	char *req = c->req;
	/* The request is read even from a stranger: closing on unread data
	 * would reset the connection before the refusal arrives. */
	if (c->refused) {
		replyf(fd, GFP_CTL_REFUSED "only uid %u may control this process\n",
		       (unsigned)geteuid());
		return;
	}
	/* Whole or not at all: nothing behind the first line, no NUL in it
	 * (the parsers would stop there and apply the part before). */
	char *nl = memchr(req, '\n', c->len);
	size_t line = nl ? (size_t)(nl - req) : c->len;
	if (nl && line + 1 < c->len) {
		replyf(fd,
		       GFP_CTL_ERROR "one request per connection: %zu bytes after the first "
		                     "line (nothing done)\n",
		       c->len - line - 1);
		return;
	}
	const char *nul = memchr(req, '\0', line);
	if (nul) {
		replyf(fd, GFP_CTL_ERROR "a NUL byte in the request, at byte %zu (nothing done)\n",
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
		replyf(fd,
		       GFP_CTL_ERROR
		       "unknown request '%.64s' (get [KEY], set KEY=VALUE;..., report, status)\n",
		       req);
}

/* The connection ends. What the client sent and nobody read is read
 * first (as much as is there): closing on unread data would reset the
 * connection, and the client might lose the reply. */
static void client_close(struct client *c)
{
	char sink[4096];
	for (int i = 0; i < 256 && read(c->fd, sink, sizeof(sink)) > 0; i++)
		;
	close(c->fd);
	c->fd = -1;
}

/* Why a client is dropped, and what it is told (at most what its socket
 * takes now: no waiting for it). */
static void client_drop(struct client *c, const char *why)
{
	reply_deadline = 0;
	reply_failed = false;
	if (c->refused)
		serve(c);
	else
		replyf(c->fd,
		       GFP_CTL_ERROR "%s (nothing done; send one line: get [KEY], set "
		                     "KEY=VALUE;..., report, status)\n",
		       why);
	client_close(c);
}

static void client_read(struct client *c)
{
	for (;;) {
		if (c->len == CTL_REQ_MAX) {
			client_drop(c, "request longer than 64 KiB");
			return;
		}
		ssize_t r = read(c->fd, c->req + c->len, CTL_REQ_MAX - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* the rest later, by the deadline */
		if (r < 0) {
			client_close(c);
			return;
		}
		if (r == 0) {
			/* A client that stopped in the middle, perhaps killed:
			 * what it sent may be the first part of a set. */
			client_drop(c, "the request ended before its newline");
			return;
		}
		bool nl = memchr(c->req + c->len, '\n', (size_t)r);
		c->len += (size_t)r;
		if (nl) {
			reply_deadline = now_ms() + CTL_REPLY_MS;
			reply_failed = false;
			serve(c);
			client_close(c);
			return;
		}
	}
}

/* Takes the waiting connections while there is a slot. False when the
 * listening socket is gone. */
static bool accept_clients(int64_t now, int64_t *pause_until)
{
	for (int i = 0; i < CTL_CLIENTS; i++) {
		struct client *c = &clients[i];
		if (c->fd >= 0)
			continue;
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK)
				return false;
			if (errno == EINTR || errno == ECONNABORTED) {
				i--;
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				*pause_until = now + 100; /* out of descriptors or buffers */
			return true;
		}
		struct ucred cr;
		socklen_t len = sizeof(cr);
		c->fd = fd;
		c->refused =
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || cr.uid != geteuid();
		c->len = 0;
		c->deadline = now + CTL_READ_MS;
	}
	return true;
}

static void *listener(void *arg)
{
	(void)arg;
	gfp_tls.guard = 1; /* never through the policy, never counted */
	gfp_tls.mode = GFP_TLS_IDLE;
	gfp_tls.countdown = INT64_MAX;
	gfp_tls.errnop = &errno;
	const size_t each = CTL_REQ_MAX + 1;
	char *bufs = sys_mmap(NULL, CTL_CLIENTS * each, PROT_READ | PROT_WRITE,
	                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bufs == MAP_FAILED) {
		gfp_log(GFP_LOG_WARNING, "ctl=1: no memory for the listener: %s",
		        gfp_strerror(errno));
		return NULL;
	}
	for (int i = 0; i < CTL_CLIENTS; i++)
		clients[i] = (struct client){.fd = -1, .req = bufs + (size_t)i * each};
	int64_t pause_until = 0;
	for (;;) {
		struct pollfd p[CTL_CLIENTS + 1];
		struct client *who[CTL_CLIENTS + 1];
		nfds_t n = 0;
		int64_t now = now_ms(), wake = INT64_MAX;
		bool room = false;
		for (int i = 0; i < CTL_CLIENTS; i++) {
			struct client *c = &clients[i];
			if (c->fd < 0) {
				room = true;
				continue;
			}
			p[n] = (struct pollfd){.fd = c->fd, .events = POLLIN};
			who[n++] = c;
			wake = c->deadline < wake ? c->deadline : wake;
		}
		if (room && now >= pause_until) {
			p[n] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
			who[n++] = NULL;
		} else if (room) {
			wake = pause_until < wake ? pause_until : wake;
		}
		int timeout = wake == INT64_MAX ? -1 : wake > now ? (int)(wake - now) : 0;
		if (poll(p, n, timeout) < 0 && errno != EINTR)
			usleep(100 * 1000); /* out of memory: later */
		now = now_ms();
		for (nfds_t i = 0; i < n; i++) {
			struct client *c = who[i];
			if (!c) {
				if ((p[i].revents & POLLNVAL) ||
				    (p[i].revents && !accept_clients(now, &pause_until)))
					return NULL; /* the socket is gone */
				continue;
			}
			if (p[i].revents)
				client_read(c);
			if (c->fd >= 0 && now >= c->deadline)
				client_drop(c, "request not complete within 1 s");
		}
	}
}

/* ------------------------------------------------------------------------
 * Start and end
 * ---------------------------------------------------------------------- */

/* ctl=1 asked for a listener that cannot be had safely: exit 125 before
 * main, as a bad GFP_POLICY does (a warning under GFP_STRICT=0), rather
 * than run on without the control the user counts on. */
static void no_directory(const char *why)
{
	bool fatal = gfp_strict;
	gfp_log(fatal ? GFP_LOG_ERROR : GFP_LOG_WARNING, "ctl=1: %s%s", why,
	        fatal ? "" : "; not listening [ignored: GFP_STRICT=0]");
	if (fatal) {
		/* What the program's _exit does (preload/start.c): the
		 * process is past its start-up, so its report is written and
		 * a member of a tree leaves it. */
		init_fini_exit();
		if (gfp_tree_on)
			tree_exit();
		sys_exit_group(GFP_EXIT_CONFIG);
	}
}

void ctl_start(void)
{
	if (!gfp_policy.ctl || gfp_secure || listen_fd >= 0)
		return;
	gfp_tls.guard++;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = -1;
	char why[512];
	if (ctl_socket_path(0, getpid(), sock_path, sizeof(sock_path), true, why, sizeof(why)) !=
	    0) {
		no_directory(why);
		goto out;
	}
	memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	unlink(sock_path); /* a stale socket of an earlier process with this pid */
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    chmod(sock_path, 0600) != 0 || listen(fd, 8) != 0) {
		gfp_log(GFP_LOG_WARNING, "ctl=1: cannot listen on %s: %s", sock_path,
		        gfp_strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	listen_fd = gfp_fd_lift(fd); /* out of the program's way */
	owner = getpid();
	/* libc's pthread_create, not the shim's: the program's threads keep
	 * their creation order (fail.seed). Every signal blocked: the
	 * program's handlers never run on this thread. */
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) = NULL;
	void *sym = dlsym(RTLD_NEXT, "pthread_create");
	if (sym)
		__builtin_memcpy(&create, &sym, sizeof(create));
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	int rc = create ? create(&t, NULL, listener, NULL) : ENOSYS;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		gfp_log(GFP_LOG_WARNING, "ctl=1: cannot start the listener: %s", gfp_strerror(rc));
		close(listen_fd);
		listen_fd = -1;
		unlink(sock_path);
	} else {
		pthread_detach(t);
	}
out:
	gfp_tls.guard--;
}

void ctl_stop(void)
{
	if (listen_fd >= 0 && getpid() == owner)
		unlink(sock_path);
}
