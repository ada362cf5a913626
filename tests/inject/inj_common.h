/*
 * inj_common.h - helpers shared by the fault-injection test programs.
 *
 * Nothing here allocates: results are collected in static buffers and
 * leave with write(2), so the only allocation requests a program makes are
 * the ones under test.
 */
#ifndef INJ_COMMON_H
#define INJ_COMMON_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Keeps a pointer alive, so the compiler cannot drop a malloc/free pair. */
static inline void inj_keep(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* printf to a file descriptor without allocating. */
static inline __attribute__((format(printf, 2, 3))) void inj_out(int fd, const char *fmt, ...)
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

static inline __attribute__((noreturn)) void inj_die(const char *msg)
{
	inj_out(2, "%s\n", msg);
	_exit(2);
}

/* The result character of one request: '.' served, 'X' NULL with ENOMEM,
 * 'E' NULL with another errno (always a bug). */
static inline char inj_result(const void *p, int err)
{
	if (p != NULL)
		return '.';
	return err == ENOMEM ? 'X' : 'E';
}

#endif /* INJ_COMMON_H */
