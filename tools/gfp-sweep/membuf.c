/*
 * membuf.c - formatted text into memory (sweep.h's struct membuf): for a
 * JSON string, a key to compare, or text that is escaped as a whole.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sweep.h"

FILE *membuf_open(struct membuf *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f)
		die(EXIT_USAGE, "open_memstream: %s", strerror(errno));
	return m->f;
}
