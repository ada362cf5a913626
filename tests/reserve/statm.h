/*
 * statm.h - a field of /proc/self/statm in bytes (0: size, 1: resident),
 * read without allocating: the tests read it while memory is exhausted.
 */
#ifndef RS_STATM_H
#define RS_STATM_H

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static inline long statm_bytes(int field)
{
	char buf[256], *p = buf;
	int fd = open("/proc/self/statm", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		_exit(2);
	buf[n] = 0;
	long v = strtol(p, &p, 10);
	while (field-- > 0)
		v = strtol(p, &p, 10);
	return v * sysconf(_SC_PAGESIZE);
}

#endif
