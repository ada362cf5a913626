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

static struct gfp_dest out = {.fd = STDERR_FILENO};

/* fd:N or a file path, for GFP_LOG and GFP_RECORD alike; `example` names a
 * file in the hint for a descriptor that is not open. */
int gfp_dest_set(struct gfp_dest *d, const char *var, const char *expected, const char *example,
                 const char *dest, bool secure, char *err, size_t errlen)
{
	if (strncmp(dest, "fd:", 3) == 0) {
		int fd = 0;
		const char *p = dest + 3;
		for (; *p >= '0' && *p <= '9' && fd < 1000000; p++)
			fd = fd * 10 + (*p - '0');
		if (*p || p == dest + 3) {
			gfp_snprintf(err, errlen, "%s: bad value '%.64s' (expected %s)", var, dest,
			             expected);
			return -1;
		}
		if (fcntl(fd, F_GETFD) < 0) {
			gfp_snprintf(err, errlen,
			             "%s: descriptor %d is not open (open it in the shell, e.g. "
			             "'3>>%s', or give a file path)",
			             var, fd, example);
			return -1;
		}
		d->fd = fd;
		d->path[0] = '\0';
		return 0;
	}
	if (secure) /* a setuid program must not append to a path the caller chose */
		return 0;
	if (strlen(dest) >= sizeof(d->path)) {
		gfp_snprintf(err, errlen, "%s: path is longer than %zu bytes", var,
		             sizeof(d->path) - 1);
		return -1;
	}
	int fd = open(dest, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		gfp_snprintf(err, errlen, "%s: cannot open '%.200s': %s (give a writable path)",
		             var, dest, strerror(errno));
		return -1;
	}
	close(fd);
	memcpy(d->path, dest, strlen(dest) + 1);
	return 0;
}

/* One write(2) of the whole text; a path is opened for it (O_APPEND). */
void gfp_dest_write(const struct gfp_dest *d, const char *p, size_t n)
{
	int saved = errno;
	if (d->path[0]) {
		int fd = open(d->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			gfp_write_all(fd, p, n);
			close(fd);
		}
	} else if (d->fd >= 0) {
		gfp_write_all(d->fd, p, n);
	}
	errno = saved;
}

int log_set_dest(const char *dest, bool secure, char *err, size_t errlen)
{
	if (!dest || !*dest || strcmp(dest, "stderr") == 0) {
		out.fd = STDERR_FILENO;
		out.path[0] = '\0';
		return 0;
	}
	return gfp_dest_set(&out, "GFP_LOG", "stderr, fd:N or a file path", "log", dest, secure,
	                    err, errlen);
}

void gfp_log_raw(const char *p, size_t n)
{
	gfp_dest_write(&out, p, n);
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
