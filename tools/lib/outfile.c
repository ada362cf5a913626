/*
 * outfile.c - reports written whole and renamed into place, states appended
 * without following a symlink (outfile.h).
 *
 * A report's path may hold a symlink someone planted (in /tmp, in a shared
 * CI workspace): opening the path would write through it, and as root
 * overwrite whatever it points to. So a report goes into a new file made
 * beside the path (O_EXCL: a planted name is never opened) and is renamed
 * over it when whole; rename(2) replaces a symlink itself, never its target,
 * and a report cut short by a full disk or a signal never replaces the last
 * whole one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"
#include "outfile.h"

/* The temporaries of the reports being written, for exit and for a signal
 * handler (at most two are open at once: a campaign's index and a page). */
#define SLOTS 8
static char tmps[SLOTS][PATH_MAX + 64];
static volatile sig_atomic_t used[SLOTS];

void outfile_remove_now(void)
{
	for (int i = 0; i < SLOTS; i++)
		if (used[i])
			unlink(tmps[i]);
}

static void remove_at_exit(void)
{
	outfile_remove_now();
	for (int i = 0; i < SLOTS; i++)
		used[i] = 0;
}

/* 1 with *fd when path names one of this process's descriptors (as the
 * shim's GFP_LOG does): those names are symlinks to the descriptor's file,
 * which a rename would replace (root: /dev/stdout itself). 0 otherwise. */
static int named_fd(const char *path, int *fd)
{
	if (strcmp(path, "/dev/stdout") == 0)
		return *fd = STDOUT_FILENO, 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return *fd = STDERR_FILENO, 1;
	static const char *const prefix[] = {"/dev/fd/", "/proc/self/fd/"};
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++) {
		size_t n = strlen(prefix[i]);
		if (strncmp(path, prefix[i], n) != 0)
			continue;
		const char *p = path + n;
		long v = 0;
		for (; *p >= '0' && *p <= '9' && v < INT_MAX / 10; p++)
			v = v * 10 + (*p - '0');
		if (*p || p == path + n)
			return 0;
		*fd = (int)v;
		return 1;
	}
	return 0;
}

static const char *file_type(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISLNK(m)  ? "a symbolic link"
	                     : "not a file";
}

/* A new file beside path (mode 0600, O_EXCL), its name in a slot of the
 * list (*slot); -1 with errno. */
static int make_temp(const char *path, int *slot)
{
	static bool registered;
	int s = 0;
	while (s < SLOTS && used[s])
		s++;
	if (s == SLOTS)
		return errno = EMFILE, -1;
	if (!registered)
		registered = atexit(remove_at_exit) == 0;
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path) + (slash == path) : 1;
	int w = snprintf(tmps[s], sizeof(tmps[s]), "%.*s/.%s-XXXXXX", dir, slash ? path : ".",
	                 program_invocation_short_name);
	if (w < 0 || (size_t)w >= sizeof(tmps[s]))
		return errno = ENAMETOOLONG, -1;
	/* Listed before it exists: a signal handler may find it any time. */
	used[s] = 1;
	int fd = mkostemp(tmps[s], O_CLOEXEC);
	if (fd < 0) {
		used[s] = 0;
		return -1;
	}
	*slot = s;
	return fd;
}

static void drop_temp(int slot)
{
	unlink(tmps[slot]);
	used[slot] = 0;
}

bool outfile_check(const char *path, char *why, size_t n)
{
	int fd;
	struct stat st;
	size_t len = strlen(path);
	if (!len)
		return snprintf(why, n, "an empty path"), false;
	if (named_fd(path, &fd)) {
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
			return snprintf(why, n, "descriptor %d is not open for writing", fd), false;
		return true;
	}
	if (path[len - 1] == '/')
		return snprintf(why, n, "it is a directory (give a file's path)"), false;
	bool exists = lstat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode) && !S_ISCHR(st.st_mode))
		return snprintf(why, n, "it is %s, and a report is a file (give a file's path)",
		                file_type(st.st_mode)),
		       false;
	if (exists && S_ISCHR(st.st_mode))
		return true; /* /dev/null: written as it is */
	int slot;
	fd = make_temp(path, &slot);
	if (fd < 0)
		return snprintf(why, n, "cannot make a file in its directory: %s", strerror(errno)),
		       false;
	/* In a sticky directory (/tmp) another user's file cannot be renamed
	 * over: said now, not once the runs are done. */
	struct stat mine, there, dir;
	bool stuck = exists && fstat(fd, &mine) == 0 && mine.st_uid != 0 &&
	             lstat(path, &there) == 0 && there.st_uid != mine.st_uid;
	if (stuck) {
		char *slash = strrchr(tmps[slot], '/');
		*slash = '\0';
		stuck = stat(slash == tmps[slot] ? "/" : tmps[slot], &dir) == 0 &&
		        (dir.st_mode & S_ISVTX) && dir.st_uid != mine.st_uid;
		*slash = '/';
	}
	close(fd);
	drop_temp(slot);
	if (stuck)
		return snprintf(why, n,
		                "it belongs to uid %u in a sticky directory, where it cannot be "
		                "replaced (remove it, or give another path)",
		                (unsigned)there.st_uid),
		       false;
	return true;
}

/* The report's stream writes through these, so that the first error of
 * any write (ENOSPC, EFBIG), which stdio reports only as a flag, is the one
 * the message names. */
struct out_io {
	int fd, err;
};

static ssize_t io_write(void *cookie, const char *buf, size_t n)
{
	struct out_io *io = cookie;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(io->fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!io->err)
				io->err = w < 0 ? errno : EIO;
			return -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)n;
}

static int io_close(void *cookie)
{
	struct out_io *io = cookie;
	if (close(io->fd) != 0 && !io->err)
		io->err = errno;
	return io->err ? -1 : 0;
}

bool outfile_open(struct outfile *o, const char *path, char *why, size_t n)
{
	o->f = NULL;
	o->path = path;
	o->slot = -1;
	o->io = NULL;
	if (!outfile_check(path, why, n))
		return false;
	int fd;
	struct stat st;
	if (named_fd(path, &fd)) {
		/* What the tool printed there so far goes first. */
		fflush(stdout);
		fflush(stderr);
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	} else if (lstat(path, &st) == 0 && S_ISCHR(st.st_mode)) {
		/* O_NONBLOCK: a FIFO swapped in since lstat is refused below,
		 * not waited on. */
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode))) {
			close(fd);
			return snprintf(why, n, "it changed into %s", file_type(st.st_mode)), false;
		}
		if (fd >= 0)
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	} else {
		fd = make_temp(path, &o->slot);
	}
	if (fd < 0)
		return snprintf(why, n, "%s", strerror(errno)), false;
	cookie_io_functions_t fns = {.write = io_write, .close = io_close};
	o->io = malloc(sizeof(*o->io));
	if (o->io)
		*o->io = (struct out_io){.fd = fd, .err = 0};
	o->f = o->io ? fopencookie(o->io, "w", fns) : NULL;
	if (!o->f) {
		close(fd);
		free(o->io);
		o->io = NULL;
		if (o->slot >= 0)
			drop_temp(o->slot);
		o->slot = -1;
		return snprintf(why, n, "out of memory"), false;
	}
	return true;
}

bool outfile_close(struct outfile *o)
{
	int err = 0;
	if (o->f) {
		if (fflush(o->f) != 0 || ferror(o->f))
			err = o->io->err ? o->io->err : EIO;
		/* On disk before the rename: after a crash the path holds the
		 * old report or the new one, never an empty file. */
		if (!err && o->slot >= 0 && fsync(o->io->fd) != 0)
			err = errno;
		if (fclose(o->f) != 0 && !err)
			err = o->io->err ? o->io->err : EIO;
		free(o->io);
		o->io = NULL;
		o->f = NULL;
	}
	if (o->slot >= 0) {
		if (!err && rename(tmps[o->slot], o->path) != 0)
			err = errno;
		if (err)
			unlink(tmps[o->slot]);
		used[o->slot] = 0; /* renamed: no longer a temporary */
		o->slot = -1;
	}
	errno = err;
	return !err;
}

int outfile_append_open(const char *path, char *why, size_t n)
{
	struct stat st;
	/* O_NONBLOCK: a FIFO opens (and is refused) instead of waiting for
	 * a reader. */
	int fd =
	    open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
	         0600);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			snprintf(why, n,
			         "it is a symbolic link, not followed (give the file itself)");
		else if (e == EISDIR || e == ENXIO)
			snprintf(why, n, "it is %s, not a file",
			         e == EISDIR ? "a directory" : "a socket");
		else
			snprintf(why, n, "%s", strerror(e));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(why, n, "%s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(why, n, "it is %s, not a file", file_type(st.st_mode));
	} else if (st.st_nlink > 1) {
		snprintf(why, n,
		         "it has %lu hard links: each line would land in every one of them (give "
		         "a file of its own)",
		         (unsigned long)st.st_nlink);
	} else if (geteuid() == 0 && st.st_uid != 0) {
		snprintf(why, n,
		         "it belongs to uid %u, and root does not append to another user's file "
		         "(remove it, or give another path)",
		         (unsigned)st.st_uid);
	} else {
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		return fd;
	}
	close(fd);
	return -1;
}
