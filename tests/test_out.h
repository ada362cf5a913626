/*
 * test_out.h - printf to a file descriptor without allocating, for the test
 * programs that run under the shim: stdio would allocate through the very
 * allocator they are testing, and a full budget would fail it.
 */
#ifndef GFP_TEST_OUT_H
#define GFP_TEST_OUT_H

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static inline __attribute__((format(printf, 2, 3))) void test_out(int fd, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	for (int off = 0; off < n;) {
		ssize_t w = write(fd, buf + off, n - off);
		if (w <= 0)
			return;
		off += (int)w;
	}
}

#endif
