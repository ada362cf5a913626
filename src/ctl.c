/*
 * ctl.c - runtime control (ctl=1): a unix socket gfp-ctl talks to, to read
 * the policy, change it (the same keys and validation as GFP_POLICY) and
 * take the statistics now.
 *
 * The socket lives in a directory only the process's user can enter
 * ($XDG_RUNTIME_DIR/gfpshim, else /tmp/gfpshim-UID, mode 0700), and the
 * listener also checks the peer's uid (SO_PEERCRED). It is one thread with
 * every signal blocked, started when main() starts, whose allocations never
 * go through the policy (its guard stays raised). Nothing listens in secure
 * execution.
 *
 * A `set` is parsed into a copy of the policy and checked whole; only then
 * is it copied in, injection off while that happens, and what the keys make
 * of the process derived again (policy_derive). Threads that are idle look
 * again at their next allocation: their countdown is set to 0 (thread.c).
 * Keys whose machinery must exist from the start (a budget on or off,
 * reservations, statistics) are refused, with the reason.
 *
 * Protocol: one request line, one reply, then the connection closes.
 *   get            every key as key=value, one per line, then rules=...
 *   get KEY        that key
 *   set K=V;K=V    "ok", or "error: ..." (nothing applied)
 *   report         the GFP_REPORT JSON as of now
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"

static int listen_fd = -1;
static pid_t owner;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
uint64_t gfp_policy_gen; /* atomic: bumped by every applied set */

static bool private_dir(const char *dir, bool create)
{
	if (create && mkdir(dir, 0700) != 0 && errno != EEXIST)
		return false;
	struct stat st;
	return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       (st.st_mode & 077) == 0;
}

/* which 0: where this process listens ($XDG_RUNTIME_DIR/gfpshim, else
 * /tmp/gfpshim-UID); which 1: the /tmp one, for a gfp-ctl whose
 * environment differs from the process's. */
int ctl_socket_path(int which, pid_t pid, char *out, size_t n, bool create)
{
	char dir[sizeof(sock_path)];
	const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
	if (which == 0 && xdg && *xdg)
		gfp_snprintf(dir, sizeof(dir), "%s/gfpshim", xdg);
	else
		gfp_snprintf(dir, sizeof(dir), "/tmp/gfpshim-%u", (unsigned)geteuid());
	if (!private_dir(dir, create))
		return -1;
	int len = gfp_snprintf(out, n, "%s/%d.sock", dir, (int)pid);
	return len > 0 && (size_t)len < n ? 0 : -1;
}

/* ------------------------------------------------------------------------
 * Requests
 * ---------------------------------------------------------------------- */

static void reply(int fd, const char *s, size_t n)
{
	gfp_write_all(fd, s, n);
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
	if (next->stats != p->stats)
		return "stats= cannot change at run time (counts would start in the middle)";
	if (next->reserve_mode != p->reserve_mode ||
	    next->reserve_prefault != p->reserve_prefault ||
	    next->reserve_thread != p->reserve_thread)
		return "reserve.* cannot change at run time";
	if (next->ctl != p->ctl)
		return "ctl cannot change at run time";
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
	__atomic_store_n(&gfp_inject_on, false, __ATOMIC_RELEASE);
	gfp_policy = next;
	policy_derive();
	__atomic_add_fetch(&gfp_policy_gen, 1, __ATOMIC_ACQ_REL);
	thread_poke_all();
	budget_wake_waiters(); /* a raised limit: waiting requests try again now */
	gfp_log(GFP_LOG_INFO, "gfp-ctl set %s", text);
	reply(fd, "ok\n", 3);
}

static void report(int fd)
{
	static struct gfp_entry_stats s[GFP_ENTRY_COUNT];
	size_t cap = GFP_REPORT_MAX;
	char *text = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (text == MAP_FAILED) {
		replyf(fd, GFP_CTL_ERROR "no memory for the report\n");
		return;
	}
	struct gfp_buf b = {text, cap, 0};
	stats_format(&b, s);
	reply(fd, text, b.len);
	munmap(text, cap);
}

static void serve(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	bool refused =
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || cr.uid != geteuid();
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	static char req[64 * 1024];
	size_t n = 0;
	while (n < sizeof(req) - 1) {
		ssize_t r = read(fd, req + n, sizeof(req) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(req + n - (size_t)r, '\n', (size_t)r))
			break;
	}
	req[n] = '\0';
	/* The request is read even from a stranger: closing on unread data
	 * would reset the connection before the refusal arrives. */
	if (refused) {
		replyf(fd, GFP_CTL_REFUSED "only uid %u may control this process\n",
		       (unsigned)geteuid());
		return;
	}
	char *nl = strchr(req, '\n');
	if (nl)
		*nl = '\0';
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
	else
		replyf(fd,
		       GFP_CTL_ERROR
		       "unknown request '%.64s' (get [KEY], set KEY=VALUE;..., report)\n",
		       req);
}

/* Whether a reply that begins with these len bytes is an error. */
bool ctl_reply_is_error(const char *head, size_t len)
{
	size_t n = strlen(GFP_CTL_ERROR);
	return memcmp(head, GFP_CTL_ERROR, len < n ? len : n) == 0;
}

/* gfp-ctl's exit status for a reply: 0 done, 1 refused or not applicable,
 * 125 a set the policy parser rejected (as GFP_POLICY would exit). */
int ctl_reply_status(const char *first_line, bool is_set)
{
	if (!ctl_reply_is_error(first_line, strlen(first_line)))
		return 0;
	bool invalid = is_set &&
	               strncmp(first_line, GFP_CTL_REFUSED, strlen(GFP_CTL_REFUSED)) != 0 &&
	               strncmp(first_line, GFP_CTL_NOT_APPLIED, strlen(GFP_CTL_NOT_APPLIED)) != 0;
	return invalid ? GFP_EXIT_CONFIG : 1;
}

static void *listener(void *arg)
{
	(void)arg;
	gfp_tls.guard = 1; /* never through the policy, never counted */
	gfp_tls.mode = GFP_TLS_IDLE;
	gfp_tls.countdown = INT64_MAX;
	gfp_tls.errnop = &errno;
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK)
				return NULL; /* the socket is gone */
			if (errno != EINTR && errno != ECONNABORTED)
				usleep(100 * 1000); /* out of descriptors or buffers: later */
			continue;
		}
		serve(fd);
		close(fd);
	}
}

/* ------------------------------------------------------------------------
 * Start and end
 * ---------------------------------------------------------------------- */

void ctl_start(void)
{
	if (!gfp_policy.ctl || gfp_secure || listen_fd >= 0)
		return;
	gfp_tls.guard++;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = -1;
	if (ctl_socket_path(0, getpid(), sock_path, sizeof(sock_path), true) != 0) {
		gfp_log(GFP_LOG_WARNING,
		        "ctl=1: no private directory for the socket; not listening");
		goto out;
	}
	memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(sock_path); /* a stale socket of an earlier process with this pid */
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
	    chmod(sock_path, 0600) != 0 || listen(fd, 8) != 0) {
		gfp_log(GFP_LOG_WARNING, "ctl=1: cannot listen on %s: %s", sock_path,
		        strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	listen_fd = fd;
	owner = getpid();
	/* libc's pthread_create, not the shim's: the program's threads keep
	 * their creation order (fail.seed). Every signal blocked: the
	 * program's handlers never run on this thread. */
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
	    pthread_create;
	void *sym = dlsym(RTLD_NEXT, "pthread_create");
	if (sym)
		__builtin_memcpy(&create, &sym, sizeof(create));
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	int rc = create(&t, NULL, listener, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		gfp_log(GFP_LOG_WARNING, "ctl=1: cannot start the listener: %s", strerror(rc));
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
