/*
 * dest_set.c - a destination (GFP_LOG, GFP_RECORD, GFP_REPORT) named at
 * start-up: stderr, fd:N or a path, checked before main.
 *
 * A path is opened once, at start-up, with O_NOFOLLOW and mode 0600, and the
 * descriptor is kept (dest.c writes it): a symlink planted at the path, or
 * swapped in while the program runs, is never followed, even by root. A
 * report's path is checked now and written at exit (dest_report.c). A value
 * a parent opened and this process cannot is lost quietly until its first
 * write (dest_inherit.c).
 *
 * Must never: follow a symlink at the path, create a file others can read,
 * allocate (GFP_INHERITED is exported from a constructor).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "policy.h"
#include "fd.h"
#include "dest.h"
#include "dest_inherit.h"
#include "dest_report.h"
#include "dest_set.h"

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
		errno = e;
		return -1;
	}
	if ((fd = gfp_fd_lift(fd)) < 0 || fstat(fd, &st) != 0) {
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
		errno = st.st_nlink > 1 ? EMLINK : EPERM;
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	gfp_dest_keep(d, fd, &st, path);
	return 0;
}

/* value after the working directory, into out; false when there is none
 * (removed, or out of this root) or it does not fit. */
static bool absolute(const char *value, char *out, size_t cap)
{
	/* the system call: glibc's getcwd may fall back to opendir */
	long len = syscall(SYS_getcwd, out, cap);
	if (len <= 1 || out[0] != '/')
		return false;
	size_t used = strlen(out);
	int n =
	    gfp_snprintf(out + used, cap - used, "%s%s", out[used - 1] == '/' ? "" : "/", value);
	return n > 0 && (size_t)n < cap - used;
}

int gfp_dest_set(struct gfp_dest *d, const char *var, enum gfp_dest_kind kind, const char *value,
                 bool secure, char *err, size_t errlen)
{
	d->var = var;
	d->hash = gfp_dest_inherit_hash(var, value);
	struct gfp_dest_inherited in = {0};
	bool inherited = gfp_dest_inherit_find(var, d->hash, &in);
	char q[GFP_DEST_QUOTED];
	gfp_quote(q, sizeof(q), value, strlen(value));
	int fd;
	int named_fd = parse_fd(value, &fd);
	if (named_fd < 0) {
		gfp_snprintf(err, errlen,
		             "%s: bad value '%s' (expected stderr, fd:N or a file path)", var, q);
		return -1;
	}
	if (named_fd) {
		struct stat st;
		bool is_open = fcntl(fd, F_GETFD) >= 0;
		if (inherited && fd > STDERR_FILENO &&
		    (!is_open || (in.id && (fstat(fd, &st) != 0 || st.st_dev != in.dev ||
		                            st.st_ino != in.ino))))
			return gfp_dest_inherit_lose(d, fd, NULL, is_open ? ESTALE : EBADF, &in);
		if (!is_open) {
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
		/* A descriptor of the program's own beyond the standard three: it
		 * may close it and put another file there (see dest.c: dest_fd). */
		if (fd > STDERR_FILENO && fstat(fd, &st) == 0) {
			d->pinned = true;
			d->dev = st.st_dev;
			d->ino = st.st_ino;
			gfp_dest_inherit_name(d);
		}
		__atomic_store_n(&d->fd, fd, __ATOMIC_RELEASE);
		return 0;
	}
	if (secure) /* a setuid program must not write to a path the caller chose */
		return 0;
	char abs[sizeof(d->path) - GFP_DEST_SLACK];
	if (kind == GFP_DEST_REPORT && value[0] != '/' && absolute(value, abs, sizeof(abs))) {
		value = abs;
		d->hash = gfp_dest_inherit_hash(var, value);
		d->export_path = true;
	}
	if (strlen(value) >= sizeof(d->path) - GFP_DEST_SLACK) {
		gfp_snprintf(err, errlen, "%s: path is longer than %zu bytes", var,
		             sizeof(d->path) - GFP_DEST_SLACK - 1);
		return -1;
	}
	int r = kind == GFP_DEST_REPORT ? gfp_dest_report_check(d, value, q, err, errlen)
	                                : open_append(d, value, q, err, errlen);
	if (kind == GFP_DEST_REPORT && (r == 0 || inherited) &&
	    __atomic_load_n(&d->fd, __ATOMIC_RELAXED) < 0)
		gfp_dest_report_join(d, inherited ? in.run_pid : 0, inherited ? in.run_start : 0);
	if (r != 0 && inherited) {
		if (kind != GFP_DEST_APPEND) {
			/* tried at exit, where a failure is said */
			memcpy(d->path, value, strlen(value) + 1);
			gfp_dest_inherit_name(d);
			return 0;
		}
		return gfp_dest_inherit_lose(d, -1, value, errno, &in);
	}
	if (r == 0)
		gfp_dest_inherit_name(d);
	return r;
}
