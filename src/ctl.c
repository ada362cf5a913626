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
#include <unistd.h>

#include "internal.h"
#include "fd.h"
#include "sys.h"
#include "ctl_requests.h"

static int listen_fd = -1;
static pid_t owner;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

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
	ctl_reply_begin(c->fd, 0);
	if (c->refused)
		ctl_serve(c->req, c->len, true);
	else
		ctl_replyf(GFP_CTL_ERROR "%s (nothing done; send one line: get [KEY], set "
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
			ctl_reply_begin(c->fd, ctl_now_ms() + CTL_REPLY_MS);
			ctl_serve(c->req, c->len, c->refused);
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
		int64_t now = ctl_now_ms(), wake = INT64_MAX;
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
		now = ctl_now_ms();
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
