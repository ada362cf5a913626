/*
 * mapped.h - mapped.c: the memory a program maps itself (anonymous private
 * mmap, mremap, mprotect, munmap, brk, sbrk), charged to the budget; the
 * wrappers of preload/oscalls.c and preload/mapcalls.c hand it the
 * program's calls.
 */
#ifndef GFP_MAPPED_H
#define GFP_MAPPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"
#include "policy.h"
#include "types.h"

#pragma GCC visibility push(hidden)

/* Once true, for good: the program's calls come to mapped.c (a mapping it
 * charged must be credited, whatever the policy says later). Until then
 * the wrappers look at nothing else. */
extern bool gfp_mapped_on;

static inline bool gfp_from_jemalloc(uintptr_t pc)
{
	return pc - gfp_je_text.start < gfp_je_text.end - gfp_je_text.start;
}

/* A call the budget sees: made by the program or its libraries, not by
 * jemalloc, nor by the shim (nor while the shim works on this thread: a
 * signal handler's call then passes, as its malloc goes raw). */
bool mapped_program_call(uintptr_t pc);

/* The program's calls; `caller` is the wrapper's return address. */
void *mapped_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, uintptr_t caller);
int mapped_munmap(void *addr, size_t len);
void *mapped_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr,
                    uintptr_t caller);
int mapped_mprotect(void *addr, size_t len, int prot, uintptr_t caller);
int mapped_brk(void *addr, uintptr_t caller);
void *mapped_sbrk(intptr_t incr, uintptr_t caller);

/* budget_init: whether new mappings are charged (limit.mapped, and a
 * budget or statistics to charge them to). */
void mapped_follow_policy(void);
void mapped_report(struct gfp_buf *b);
void mapped_atfork_prepare(void);
void mapped_atfork_parent(void);
/* Before the tree and the budget hear of the child. */
void mapped_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_MAPPED_H */
