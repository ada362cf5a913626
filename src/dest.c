/*
 * dest.c - every destination the shim writes to: GFP_LOG, GFP_RECORD and
 * GFP_REPORT, named the same way (stderr, fd:N or a path), checked before
 * main (dest_set.c), written without allocating (here).
 *
 * A program that closes "all other" descriptors (daemons do) may close ours
 * and reuse its number: every write first checks that the descriptor still
 * holds the file it opened, and opens the path again only if it still names
 * that same file. fd:N above the standard three is checked the same way,
 * and dropped (said once) when the program put another file there. Writes
 * hold SIGPIPE blocked: a reader that goes away costs the destination
 * (reported once), never the program.
 *
 * The log's own destination is here too, and the one function that says a
 * line on it: the layers point one way, log.c onto dest.c, never back.
 *
 * Must never: follow a symlink at the path, allocate (it runs inside malloc
 * and in signal handlers), change errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"
#include "fd.h"
#include "dest.h"

/* The longest message line. */
#define DEST_LINE_MAX 4096

struct gfp_dest gfp_dest_log = {.var = "GFP_LOG", .fd = STDERR_FILENO, .log = true};

void gfp_dest_vsay(const char *prefix, const char *fmt, va_list ap)
{
	char line[DEST_LINE_MAX];
	struct gfp_buf b = {line, sizeof(line) - 1, 0};
	gfp_buf_printf(&b, "%s", prefix);
	b.len += (size_t)gfp_vsnprintf(line + b.len, b.cap - b.len, fmt, ap);
	if (b.len > b.cap - 1)
		b.len = b.cap - 1;
	line[b.len++] = '\n';
	(void)gfp_dest_write(&gfp_dest_log, line, b.len);
}

void gfp_dest_say(const char *prefix, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gfp_dest_vsay(prefix, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */

static void quote_where(const struct gfp_dest *d, char *out, size_t cap)
{
	char q[GFP_DEST_QUOTED];
	if (d->own)
		gfp_snprintf(out, cap, "'%s'", gfp_quote(q, sizeof(q), d->path, strlen(d->path)));
	else
		gfp_snprintf(out, cap, "fd:%d", __atomic_load_n(&d->fd, __ATOMIC_RELAXED));
}

/* The first failure of a destination is said once; then it is dropped. */
static void dest_failed(struct gfp_dest *d, int err)
{
	if (__atomic_exchange_n(&d->dead, true, __ATOMIC_ACQ_REL))
		return;
	char where[GFP_DEST_QUOTED + 8];
	quote_where(d, where, sizeof(where));
	const char *what = d->log ? "messages" : strcmp(d->var, "GFP_RECORD") == 0 ? "records" : "";
	char lost[160];
	const char *why = gfp_strerror(err);
	if (d->lost && d->own) {
		gfp_snprintf(lost, sizeof(lost),
		             "%s in this process (uid %u), though its parent "
		             "opened it",
		             gfp_strerror(err), (unsigned)geteuid());
		why = lost;
	} else if (d->lost) {
		why = "this process did not inherit the descriptor its parent wrote to";
	} else if (err == ESTALE)
		why = d->own
		          ? "the program closed its descriptor and the path now names another "
		            "file"
		          : "the program closed the descriptor or put another file at its number";
	if (!d->log) {
		gfp_dest_say("gfpshim: warning: ", "%s: cannot write to %s: %s%s%s", d->var, where,
		             why, *what ? "; no more " : "", what);
		return;
	}
	/* The log cannot carry news of its own failure: stderr does, unless
	 * it was the log. */
	if (__atomic_load_n(&d->fd, __ATOMIC_RELAXED) == STDERR_FILENO && !d->own)
		return;
	char line[GFP_DEST_QUOTED + 256];
	int n = gfp_snprintf(line, sizeof(line),
	                     "gfpshim: warning: %s: cannot write to %s: %s; no more %s\n", d->var,
	                     where, why, what);
	if (n >= (int)sizeof(line))
		n = (int)sizeof(line) - 1;
	(void)gfp_write_all(STDERR_FILENO, line, (size_t)n);
}

/* The descriptor to write to: for one of ours, the one it opened, or the
 * same file opened again (see the head of the file); -1 with errno. */
static int dest_fd(struct gfp_dest *d)
{
	int fd = __atomic_load_n(&d->fd, __ATOMIC_ACQUIRE);
	struct stat st;
	if (!d->own) {
		if (d->pinned &&
		    (fstat(fd, &st) != 0 || st.st_dev != d->dev || st.st_ino != d->ino)) {
			errno = ESTALE;
			return -1;
		}
		return fd;
	}
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == d->dev && st.st_ino == d->ino)
		return fd;
	int again =
	    open(d->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (again < 0) {
		if (errno == ELOOP) /* a symlink now: another file, not followed */
			errno = ESTALE;
		return -1;
	}
	if (fstat(again, &st) != 0 || st.st_dev != d->dev || st.st_ino != d->ino) {
		close(again);
		errno = ESTALE;
		return -1;
	}
	int high = gfp_fd_lift(again);
	if (high < 0)
		return -1;
	fcntl(high, F_SETFL, fcntl(high, F_GETFL) & ~O_NONBLOCK);
	/* The old number is the program's now: never close it. */
	if (__atomic_compare_exchange_n(&d->fd, &fd, high, false, __ATOMIC_ACQ_REL,
	                                __ATOMIC_ACQUIRE))
		return high;
	close(high); /* another thread got there first */
	return fd;
}

/* gfp_write_all with SIGPIPE blocked: a pipe without a reader gives EPIPE and
 * the signal it raised is taken back, unless one was pending already. And
 * with cancellation disabled: write(2) is a cancellation point, malloc is
 * none, and a record must not be cut off half-written. */
bool gfp_dest_write_fd(int fd, const char *p, size_t n)
{
	int cancel_state;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	sigset_t pipe, old;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	bool pending_before = false;
	if (sigismember(&old, SIGPIPE)) {
		sigset_t pending;
		pending_before = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
	}
	bool ok = gfp_write_all(fd, p, n);
	int err = errno;
	if (!ok && err == EPIPE && !pending_before) {
		static const struct timespec zero = {0, 0};
		sigtimedwait(&pipe, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_setcancelstate(cancel_state, NULL);
	errno = err;
	return ok;
}

bool gfp_dest_on(const struct gfp_dest *d)
{
	return __atomic_load_n(&d->fd, __ATOMIC_RELAXED) >= 0 || d->path[0];
}

bool gfp_dest_private(const struct gfp_dest *d)
{
	return (d->own || __atomic_load_n(&d->fd, __ATOMIC_RELAXED) > STDERR_FILENO) && !d->lost &&
	       !__atomic_load_n(&d->dead, __ATOMIC_RELAXED);
}

bool gfp_dest_write(struct gfp_dest *d, const char *p, size_t n)
{
	if (__atomic_load_n(&d->dead, __ATOMIC_RELAXED))
		return false;
	int saved = errno;
	if (d->lost) {
		dest_failed(d, d->lost);
		errno = saved;
		return false;
	}
	int fd = dest_fd(d);
	bool ok = fd >= 0 && gfp_dest_write_fd(fd, p, n);
	/* A full non-blocking pipe loses this line only. */
	if (!ok && errno != EAGAIN)
		dest_failed(d, errno);
	errno = saved;
	return ok;
}

/* d writes to fd, which path opened: st tells it from what the program may
 * put under its number later. */
void gfp_dest_keep(struct gfp_dest *d, int fd, const struct stat *st, const char *path)
{
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->own = true;
	memcpy(d->path, path, strlen(path) + 1);
	__atomic_store_n(&d->fd, fd, __ATOMIC_RELEASE);
}
