/*
 * fd.c - the shim's own descriptors: where they go, and the names messages
 * give a file's type.
 *
 * Descriptors the shim keeps sit at the top of the numbers a program uses
 * (gfp_fd_lift), close-on-exec: a program that lists its descriptors, or
 * passes some to a child by number, finds the ones it opened where it would
 * without the shim.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd.h"

/* A descriptor of the shim's sits above the standard three: a program
 * started with one of them closed must not find our file there. */
#define FD_MIN 3

/*
 * The shim's descriptors take the lowest free numbers from FD_TOP - FD_SLOTS
 * up (below RLIMIT_NOFILE when that is lower). A program is handed the
 * lowest free number, so it meets these only with some thousand open, and
 * shells' own (10 and up, bash's 255) lie below. 1024 is the kernel's
 * default soft limit and select()'s FD_SETSIZE; higher numbers would grow
 * the kernel's table of descriptors in every process, and every fork
 * copies it.
 */
#define FD_TOP   1024
#define FD_SLOTS 32

const char *gfp_fd_type(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISLNK(m)  ? "a symbolic link"
	                     : "not a file";
}

static int fd_floor(void)
{
	struct rlimit rl;
	rlim_t top = FD_TOP;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < top)
		top = rl.rlim_cur;
	return top >= FD_MIN + FD_SLOTS ? (int)(top - FD_SLOTS) : FD_MIN;
}

int gfp_fd_lift(int fd)
{
	int floor = fd_floor();
	if (fd < 0 || fd >= floor)
		return fd;
	int saved = errno;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
	if (high < 0 && fd < FD_MIN)
		high = fcntl(fd, F_DUPFD_CLOEXEC, FD_MIN);
	if (high < 0 && fd >= FD_MIN) {
		/* every number up there taken: it works where it is */
		errno = saved;
		return fd;
	}
	int err = high < 0 ? errno : saved;
	close(fd);
	errno = err;
	return high;
}
