/*
 * unwind_reserve.h - unwind_reserve.c: address space kept for naming
 * frames when memory ran out for real.
 */
#ifndef GFP_UNWIND_RESERVE_H
#define GFP_UNWIND_RESERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* At start-up, before any pressure. */
void unwind_reserve_init(void);
/* Around one naming (a backtrace, a frame): true when this call holds the
 * reserve and must release it. */
bool unwind_reserve_hold(void);
void unwind_reserve_release(void);
/* Maps `len` bytes (a whole number of pages) of file fd from `off`,
 * read-only, inside the reserve: NULL when this thread does not hold it
 * or it has no room left (the caller maps the usual way). */
void *unwind_reserve_map(size_t len, int fd, off_t off);
/* Gives back what unwind_reserve_map returned. */
void unwind_reserve_unmap(void *p, size_t len);
void unwind_reserve_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_UNWIND_RESERVE_H */
