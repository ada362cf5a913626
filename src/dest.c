/*
 * dest.c - every destination the shim writes to: GFP_LOG, GFP_RECORD and
 * GFP_REPORT, named the same way (stderr, fd:N or a path), checked before
 * main, written without allocating.
 *
 * A path is opened once, at start-up, with O_NOFOLLOW and mode 0600, and the
 * descriptor is kept: a symlink planted at the path, or swapped in while the
 * program runs, is never followed, even by root. A report is written whole
 * at exit into a new file (O_EXCL) in the same directory and renamed over
 * the path, so a symlink there is replaced, not written through.
 *
 * A program that closes "all other" descriptors (daemons do) may close ours
 * and reuse its number: every write first checks that the descriptor still
 * holds the file it opened, and opens the path again only if it still names
 * that same file. Writes hold SIGPIPE blocked: a reader that goes away costs
 * the destination (reported once), never the program.
 *
 * Must never: follow a symlink at the path, create a file others can read,
 * allocate (it runs inside malloc and in signal handlers), change errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h> /* rename(2) only: no stdio */
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"
#include "log.h"
#include "dest.h"

/* What the messages quote of a path. */
#define QUOTED_PATH 512

/* The temporary name beside the report's, and its pid when %p expands. */
#define REPORT_SLACK 64

/* A destination's own descriptor sits above the standard three: a program
 * started with one of them closed must not find our file there. */
#define DEST_FD_MIN 3

/* ------------------------------------------------------------------------
 * Names
 * ---------------------------------------------------------------------- */

/* 1 with *fd when value names a descriptor (stderr, fd:N, and the paths that
 * alias one: those are symlinks that O_NOFOLLOW would refuse), 0 for a
 * path, -1 for a malformed number. */
static int parse_fd(const char *v, int *fd)
{
	if (strcmp(v, "stderr") == 0 || strcmp(v, "/dev/stderr") == 0)
		return *fd = STDERR_FILENO, 1;
	if (strcmp(v, "/dev/stdout") == 0)
		return *fd = STDOUT_FILENO, 1;
	static const char *const prefix[] = {"fd:", "/dev/fd/", "/proc/self/fd/"};
	const char *num = NULL;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]) && !num; i++)
		if (strncmp(v, prefix[i], strlen(prefix[i])) == 0)
			num = v + strlen(prefix[i]);
	if (!num)
		return 0;
	int n = 0;
	const char *p = num;
	for (; *p >= '0' && *p <= '9' && n < 1000000; p++)
		n = n * 10 + (*p - '0');
	if (*p || p == num)
		return -1;
	*fd = n;
	return 1;
}

const char *gfp_file_type(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISLNK(m)  ? "a symbolic link"
	                     : "not a file";
}

/* The report's path with %p replaced by the pid; false when it does not fit. */
static bool expand_pid(const char *tmpl, char *out, size_t cap)
{
	struct gfp_buf b = {out, cap, 0};
	for (const char *c = tmpl; *c; c++) {
		if (c[0] == '%' && c[1] == 'p') {
			gfp_buf_printf(&b, "%d", (int)getpid());
			c++;
		} else {
			gfp_buf_printf(&b, "%c", *c);
		}
	}
	return b.len + 1 < cap;
}

/* The directory part of path into dir ("." when there is none). */
static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		gfp_snprintf(dir, cap, ".");
	else if (slash == path)
		gfp_snprintf(dir, cap, "/");
	else
		gfp_snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

/* A new file beside path, O_EXCL (a name someone planted, even a symlink,
 * is skipped, never opened), 0600; its name in tmp. */
static int create_temp(const char *path, char *tmp, size_t cap)
{
	char dir[sizeof(((struct gfp_dest *)0)->path) + REPORT_SLACK];
	dir_of(path, dir, sizeof(dir));
	static unsigned counter; /* atomic */
	for (int attempt = 0; attempt < 64; attempt++) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		gfp_snprintf(tmp, cap, "%s/.gfpshim-%d-%x%lx.tmp", dir, (int)getpid(),
		             __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED),
		             (unsigned long)ts.tv_nsec);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* fd moved to DEST_FD_MIN or above (the low number closed again), or -1. */
static int lift(int fd)
{
	if (fd < 0 || fd >= DEST_FD_MIN)
		return fd;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, DEST_FD_MIN);
	int err = errno;
	close(fd);
	errno = err;
	return high;
}

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */

static void quote_where(const struct gfp_dest *d, char *out, size_t cap)
{
	char q[QUOTED_PATH];
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
	char where[QUOTED_PATH + 8];
	quote_where(d, where, sizeof(where));
	const char *what = d->log ? "messages" : strcmp(d->var, "GFP_RECORD") == 0 ? "records" : "";
	const char *why = err == ESTALE ? "the program closed its descriptor and the path now "
	                                  "names another file"
	                                : gfp_strerror(err);
	if (!d->log) {
		gfp_log(GFP_LOG_WARNING, "%s: cannot write to %s: %s%s%s", d->var, where, why,
		        *what ? "; no more " : "", what);
		return;
	}
	/* The log cannot carry news of its own failure: stderr does, unless
	 * it was the log. */
	if (__atomic_load_n(&d->fd, __ATOMIC_RELAXED) == STDERR_FILENO && !d->own)
		return;
	char line[QUOTED_PATH + 256];
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
	if (!d->own)
		return fd;
	struct stat st;
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
	int high = lift(again);
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

/* write_all with SIGPIPE blocked: a pipe without a reader gives EPIPE and
 * the signal it raised is taken back, unless one was pending already. And
 * with cancellation disabled: write(2) is a cancellation point, malloc is
 * none, and a record must not be cut off half-written. */
static bool write_nosigpipe(int fd, const char *p, size_t n)
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

bool gfp_dest_write(struct gfp_dest *d, const char *p, size_t n)
{
	if (__atomic_load_n(&d->dead, __ATOMIC_RELAXED))
		return false;
	int saved = errno;
	int fd = dest_fd(d);
	bool ok = fd >= 0 && write_nosigpipe(fd, p, n);
	/* A full non-blocking pipe loses this line only. */
	if (!ok && errno != EAGAIN)
		dest_failed(d, errno);
	errno = saved;
	return ok;
}

void gfp_dest_publish(struct gfp_dest *d, const char *p, size_t n)
{
	if (__atomic_load_n(&d->fd, __ATOMIC_RELAXED) >= 0) {
		gfp_dest_write(d, p, n);
		return;
	}
	if (!d->path[0])
		return;
	int saved = errno;
	char path[sizeof(d->path) + REPORT_SLACK], tmp[sizeof(path) + REPORT_SLACK];
	expand_pid(d->path, path, sizeof(path));
	int fd = create_temp(path, tmp, sizeof(tmp));
	int err = 0;
	if (fd < 0) {
		err = errno;
	} else {
		if (!write_nosigpipe(fd, p, n))
			err = errno;
		if (close(fd) != 0 && !err)
			err = errno;
		if (!err && rename(tmp, path) != 0)
			err = errno;
		if (err)
			unlink(tmp);
	}
	if (err) {
		char q[QUOTED_PATH];
		gfp_log(GFP_LOG_WARNING, "GFP_REPORT: cannot write to '%s': %s",
		        gfp_quote(q, sizeof(q), path, strlen(path)), gfp_strerror(err));
	}
	errno = saved;
}

/* ------------------------------------------------------------------------
 * Start-up
 * ---------------------------------------------------------------------- */

/* d writes to fd, which path opened: st tells it from what the program may
 * put under its number later. */
static void keep(struct gfp_dest *d, int fd, const struct stat *st, const char *path)
{
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->own = true;
	memcpy(d->path, path, strlen(path) + 1);
	__atomic_store_n(&d->fd, fd, __ATOMIC_RELEASE);
}

/* A path for messages or records: opened now, for good. */
static int open_append(struct gfp_dest *d, const char *path, const char *q, char *err,
                       size_t errlen)
{
	/* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of
	 * stopping the process before main. */
	int fd = open(
	    path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
	    0600);
	struct stat st;
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			gfp_snprintf(err, errlen,
			             "%s: '%s' is a symbolic link, not followed (give the file it "
			             "points to, fd:N or stderr)",
			             d->var, q);
		else if (e == ENXIO)
			gfp_snprintf(err, errlen,
			             "%s: '%s' is a FIFO with no reader (start the reader first, "
			             "or give fd:N)",
			             d->var, q);
		else
			gfp_snprintf(err, errlen, "%s: cannot open '%s': %s (give a writable path)",
			             d->var, q, gfp_strerror(e));
		return -1;
	}
	if ((fd = lift(fd)) < 0 || fstat(fd, &st) != 0) {
		gfp_snprintf(err, errlen, "%s: cannot open '%s': %s", d->var, q,
		             gfp_strerror(errno));
		return -1;
	}
	/* O_NOFOLLOW sees symlinks only: a hard link to a file someone else
	 * owns, or a file planted for root, is as bad. */
	if (S_ISREG(st.st_mode) && (st.st_nlink > 1 || (geteuid() == 0 && st.st_uid != 0))) {
		if (st.st_nlink > 1)
			gfp_snprintf(err, errlen,
			             "%s: '%s' has %lu hard links: appending would write to every "
			             "one of them (give a file of its own, fd:N or stderr)",
			             d->var, q, (unsigned long)st.st_nlink);
		else
			gfp_snprintf(err, errlen,
			             "%s: '%s' belongs to uid %u, and root does not append to "
			             "another user's file (remove it, or give fd:N or stderr)",
			             d->var, q, (unsigned)st.st_uid);
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	keep(d, fd, &st, path);
	return 0;
}

/* A report's path: checked now (a new file can be made beside it), written
 * at exit. A device (/dev/null, /dev/full) is opened now and written. */
static int check_report(struct gfp_dest *d, const char *tmpl, const char *q, char *err,
                        size_t errlen)
{
	char path[sizeof(d->path) + REPORT_SLACK];
	expand_pid(tmpl, path, sizeof(path));
	size_t len = strlen(path);
	struct stat st;
	bool exists = lstat(path, &st) == 0;
	if ((len && path[len - 1] == '/') || (exists && S_ISDIR(st.st_mode))) {
		gfp_snprintf(err, errlen,
		             "%s: '%s' is a directory (give a file path, fd:N or stderr)", d->var,
		             q);
		return -1;
	}
	if (exists) {
		if (S_ISCHR(st.st_mode)) {
			int fd = lift(open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
			if (fd < 0 || fstat(fd, &st) != 0) {
				gfp_snprintf(err, errlen, "%s: cannot open '%s': %s", d->var, q,
				             gfp_strerror(errno));
				return -1;
			}
			keep(d, fd, &st, path);
			return 0;
		}
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			gfp_snprintf(err, errlen,
			             "%s: '%s' is not a regular file (%s) (give a file path, or "
			             "fd:N for a pipe)",
			             d->var, q, gfp_file_type(st.st_mode));
			return -1;
		}
	}
	char tmp[sizeof(path) + REPORT_SLACK];
	int fd = create_temp(path, tmp, sizeof(tmp));
	if (fd < 0) {
		int e = errno;
		char dir[sizeof(path)], qd[QUOTED_PATH];
		dir_of(path, dir, sizeof(dir));
		gfp_snprintf(err, errlen,
		             "%s: cannot create a file in '%s': %s (give a path in an existing, "
		             "writable directory, fd:N or stderr)",
		             d->var, gfp_quote(qd, sizeof(qd), dir, strlen(dir)), gfp_strerror(e));
		return -1;
	}
	close(fd);
	unlink(tmp);
	memcpy(d->path, tmpl, strlen(tmpl) + 1);
	return 0;
}

int gfp_dest_set(struct gfp_dest *d, const char *var, enum gfp_dest_kind kind, const char *value,
                 bool secure, char *err, size_t errlen)
{
	d->var = var;
	char q[QUOTED_PATH];
	gfp_quote(q, sizeof(q), value, strlen(value));
	int fd;
	int named = parse_fd(value, &fd);
	if (named < 0) {
		gfp_snprintf(err, errlen,
		             "%s: bad value '%s' (expected stderr, fd:N or a file path)", var, q);
		return -1;
	}
	if (named) {
		if (fcntl(fd, F_GETFD) < 0) {
			gfp_snprintf(err, errlen,
			             "%s: descriptor %d is not open (open it in the shell, e.g. "
			             "'3>>%s', or give a file path)",
			             var, fd,
			             kind == GFP_DEST_REPORT ? "report.json"
			             : d->log                ? "log"
			                                     : "records");
			return -1;
		}
		d->own = false;
		d->path[0] = '\0';
		__atomic_store_n(&d->fd, fd, __ATOMIC_RELEASE);
		return 0;
	}
	if (secure) /* a setuid program must not write to a path the caller chose */
		return 0;
	if (strlen(value) >= sizeof(d->path) - REPORT_SLACK) {
		gfp_snprintf(err, errlen, "%s: path is longer than %zu bytes", var,
		             sizeof(d->path) - REPORT_SLACK - 1);
		return -1;
	}
	return kind == GFP_DEST_REPORT ? check_report(d, value, q, err, errlen)
	                               : open_append(d, value, q, err, errlen);
}
