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

#include "../test_out.h"

/* Keeps a pointer alive, so the compiler cannot drop a malloc/free pair. */
static inline void inj_keep(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

#define inj_out test_out /* tests/test_out.h */

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
