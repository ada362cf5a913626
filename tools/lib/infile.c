/*
 * infile.c - the files the tools read, each whole (infile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "infile.h"
#include "tool.h"

char *infile_read(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *text = infile_read_fd(fd, len);
	int err = errno;
	close(fd);
	errno = err;
	return text;
}

char *infile_read_fd(int fd, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	ssize_t r = 0;
	while (buf && (r = read(fd, buf + n, cap - n - 1)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
		if (cap - n - 1 == 0) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				free(buf);
			buf = nb;
			cap *= 2;
		}
	}
	if (!buf)
		die(EXIT_USAGE, "out of memory reading a file");
	/* A directory opens fine and fails only here, with EISDIR. */
	if (r < 0) {
		int err = errno;
		free(buf);
		errno = err;
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}
