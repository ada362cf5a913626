/*
 * show_mem.h - show_mem.c: the kernel's show_mem for the budget.
 */
#ifndef GFP_SHOW_MEM_H
#define GFP_SHOW_MEM_H

#pragma GCC visibility push(hidden)

/* The kernel's show_mem for the budget, and the top call sites by live bytes
 * under stats=sites (as Linux 6.10+ appends from allocinfo): lines after a
 * newline, each starting with `prefix`. */
struct gfp_buf;
void show_mem(struct gfp_buf *b, const char *prefix);

#pragma GCC visibility pop

#endif /* GFP_SHOW_MEM_H */
