/*
 * ctl_proto.c - what the control socket's two ends agree on: where the
 * socket of a process lives, and what a reply's first line means. ctl.c
 * listens; gfp-ctl connects, linking this with the policy library alone.
 *
 * Never allocates (the listener starts before main).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy.h"

#define CTL_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)

/* The longest XDG_RUNTIME_DIR whose sockets fit in sun_path, whatever the
 * pid: "/gfpshim/" and the 7 digits of the largest pid_max, ".sock", NUL. */
#define XDG_MAX (CTL_PATH_MAX - sizeof("/gfpshim/") - 7 - sizeof(".sock") + 1)

/* Whether dir is the process's own (made here when create): owned by this
 * uid, mode 0700, a directory itself and not a symbolic link to one (lstat).
 * If not, why not in why[]. */
static bool private_dir(const char *dir, bool create, char *why, size_t n)
{
	static const char fix[] = "remove it, as its owner or root, or set XDG_RUNTIME_DIR "
	                          "to another directory of your own";
	struct stat st;
	char q[4 * CTL_PATH_MAX]; /* the directory as the messages quote it */
	gfp_quote(q, sizeof(q), dir, strlen(dir));
	if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
		gfp_snprintf(why, n,
		             "cannot create the socket directory '%s': %s (set XDG_RUNTIME_DIR to "
		             "a directory of your own)",
		             q, gfp_strerror(errno));
		return false;
	}
	if (lstat(dir, &st) != 0) {
		int err = errno;
		gfp_snprintf(why, n, "cannot use the socket directory '%s': %s", q,
		             gfp_strerror(err));
		errno = err;
		return false;
	}
	/* gfp_snprintf has no %o: the mode as four octal digits. */
	unsigned m = (unsigned)st.st_mode;
	char mode[5] = {(char)('0' + (m >> 9 & 7)), (char)('0' + (m >> 6 & 7)),
	                (char)('0' + (m >> 3 & 7)), (char)('0' + (m & 7)), '\0'};
	if (S_ISLNK(st.st_mode))
		gfp_snprintf(why, n, "the socket directory '%s' is a symbolic link (%s)", q, fix);
	else if (!S_ISDIR(st.st_mode))
		gfp_snprintf(why, n, "the socket directory '%s' is not a directory (%s)", q, fix);
	else if (st.st_uid != geteuid())
		gfp_snprintf(why, n,
		             "the socket directory '%s' is owned by uid %u (mode %s), not by uid "
		             "%u: another user may have made it to take the control socket (%s)",
		             q, (unsigned)st.st_uid, mode, (unsigned)geteuid(), fix);
	else if (st.st_mode & 077)
		gfp_snprintf(why, n,
		             "the socket directory '%s' has mode %s: others may enter it (chmod "
		             "0700 it, or %s)",
		             q, mode, fix);
	else
		return true;
	errno = EPERM;
	return false;
}

/* which 0: the directory processes listen in ($XDG_RUNTIME_DIR/gfpshim,
 * else /tmp/gfpshim-UID); which 1: the /tmp one, for a gfp-ctl whose
 * environment differs from the process's. 0, or -1 with the reason in
 * why[] and errno: ENOENT no such directory (and create false), EPERM
 * not the process's own, ENAMETOOLONG the path would not fit. */
int ctl_socket_dir(int which, char *dir, size_t n, bool create, char *why, size_t wn)
{
	const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
	if (which == 0 && xdg && *xdg) {
		/* Never a truncated path: the directory would not be the one named. */
		if (strlen(xdg) > XDG_MAX) {
			char q[1024];
			gfp_snprintf(
			    why, wn,
			    "XDG_RUNTIME_DIR '%s' is too long for a socket path (%zu bytes, at "
			    "most %zu): set a shorter one, or unset it for /tmp/gfpshim-%u",
			    gfp_quote(q, sizeof(q), xdg, strlen(xdg)), strlen(xdg), XDG_MAX,
			    (unsigned)geteuid());
			errno = ENAMETOOLONG;
			return -1;
		}
		gfp_snprintf(dir, n, "%s/gfpshim", xdg);
	} else {
		gfp_snprintf(dir, n, "/tmp/gfpshim-%u", (unsigned)geteuid());
	}
	return private_dir(dir, create, why, wn) ? 0 : -1;
}

/* Where process pid listens, in ctl_socket_dir(which). */
int ctl_socket_path(int which, pid_t pid, char *out, size_t n, bool create, char *why, size_t wn)
{
	char dir[CTL_PATH_MAX];
	if (ctl_socket_dir(which, dir, sizeof(dir), create, why, wn) != 0)
		return -1;
	int len = gfp_snprintf(out, n, "%s/%d.sock", dir, (int)pid);
	if (len > 0 && (size_t)len < n)
		return 0;
	gfp_snprintf(why, wn, "the socket path '%s/%d.sock' is too long", dir, (int)pid);
	errno = ENAMETOOLONG;
	return -1;
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
