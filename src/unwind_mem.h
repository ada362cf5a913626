/*
 * unwind_mem.h - unwind_mem.c: libunwind reads memory without a pipe.
 */
#ifndef GFP_UNWIND_MEM_H
#define GFP_UNWIND_MEM_H

#pragma GCC visibility push(hidden)

/* After libunwind has initialised: its reader of local memory replaced. */
void unwind_mem_init(void);

#pragma GCC visibility pop

#endif /* GFP_UNWIND_MEM_H */
