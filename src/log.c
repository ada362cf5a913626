/*
 * log.c - where the shim's messages go (GFP_LOG) and how they get there.
 *
 * Every message is formatted into a stack buffer and leaves with one
 * write(2), so it is never interleaved with another thread's, never
 * allocates and keeps errno. A path destination is opened per message
 * (O_APPEND): a program that closes "all other" descriptors at start-up, as
 * daemons do, cannot make us write into one of its own files.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define LOG_LINE_MAX 4096

static int log_fd = STDERR_FILENO;
static char log_path[1024]; /* non-empty: append to this file */

int log_set_dest(const char *dest, bool secure, char *err, size_t errlen)
{
	if (!dest || !*dest || strcmp(dest, "stderr") == 0) {
		log_fd = STDERR_FILENO;
		log_path[0] = '\0';
		return 0;
	}
	if (strncmp(dest, "fd:", 3) == 0) {
		int64_t fd = 0;
		const char *p = dest + 3;
		if (!*p)
			goto bad_fd;
		for (; *p; p++) {
			if (*p < '0' || *p > '9' || fd > 1000000)
				goto bad_fd;
			fd = fd * 10 + (*p - '0');
		}
		if (fcntl((int)fd, F_GETFD) < 0) {
			gfp_snprintf(
			    err, errlen,
			    "GFP_LOG: descriptor %d is not open (open it in the shell, e.g. "
			    "'3>>log', or give a file path)",
			    (int)fd);
			return -1;
		}
		log_fd = (int)fd;
		log_path[0] = '\0';
		return 0;
	bad_fd:
		gfp_snprintf(err, errlen,
		             "GFP_LOG: bad value '%.64s' (expected stderr, fd:N or a file path)",
		             dest);
		return -1;
	}
	if (secure) /* a setuid program must not append to a path the caller chose */
		return 0;
	if (strlen(dest) >= sizeof(log_path)) {
		gfp_snprintf(err, errlen, "GFP_LOG: path is longer than %zu bytes",
		             sizeof(log_path) - 1);
		return -1;
	}
	int fd = open(dest, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		gfp_snprintf(err, errlen,
		             "GFP_LOG: cannot open '%.200s': %s (give a writable path)", dest,
		             strerror(errno));
		return -1;
	}
	close(fd);
	memcpy(log_path, dest, strlen(dest) + 1);
	return 0;
}

void gfp_log_raw(const char *p, size_t n)
{
	int saved = errno;
	if (log_path[0]) {
		int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			gfp_write_all(fd, p, n);
			close(fd);
		}
	} else {
		gfp_write_all(log_fd, p, n);
	}
	errno = saved;
}

void gfp_log(enum gfp_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
	    "gfpshim: error: ", "gfpshim: warning: ", "gfpshim: info: "};
	char line[LOG_LINE_MAX];
	struct gfp_buf b = {line, sizeof(line) - 1, 0};
	gfp_buf_printf(&b, "%s", prefix[level]);
	va_list ap;
	va_start(ap, fmt);
	b.len += (size_t)gfp_vsnprintf(line + b.len, b.cap - b.len, fmt, ap);
	va_end(ap);
	if (b.len > b.cap - 1)
		b.len = b.cap - 1;
	line[b.len++] = '\n';
	gfp_log_raw(line, b.len);
}
