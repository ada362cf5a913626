/*
 * mapped.h - mapped.c: the memory a program maps itself (anonymous private
 * mmap, mremap, mprotect, munmap, brk, sbrk), charged to the budget; the
 * wrappers of preload/oscalls.c and preload/mapcalls.c hand it the
 * program's calls.
 */
#ifndef GFP_MAPPED_H
#define GFP_MAPPED_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "backend.h"
#include "policy.h"
#include "types.h"

#pragma GCC visibility push(hidden)

/* Once true, for good: the program's calls come to mapped.c (a mapping it
 * charged must be credited, whatever the policy says later). Until then
 * the wrappers look at nothing else. */
extern bool gfp_mapped_on;

/* libc's definitions (or those of a wrapper preloaded after the shim),
 * found by preload/mapcalls.c's constructor. Before it, the system call:
 * glibc's wrappers of these add nothing to it on x86-64 and aarch64, but
 * for the break, which glibc's sbrk keeps in a variable of its own. */
struct mapped_next {
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	int (*mprotect)(void *, size_t, int);
	int (*brk)(void *);
	void *(*sbrk)(intptr_t);
};
extern struct mapped_next gfp_mapped_next;

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

/* slowpath_attempt for a mapping's charge (req->mapping): a token, or NULL with
 * why = BUDGET. */
void *mapped_attempt(struct gfp_req *req, gfp_t f);
/* budget_init: whether new mappings are charged (limit.mapped, and a
 * budget or statistics to charge them to). */
void mapped_follow_policy(void);
void mapped_report(struct gfp_buf *b);
void mapped_atfork_prepare(void);
void mapped_atfork_parent(void);
/* Before the tree and the budget hear of the child. */
void mapped_atfork_child(void);

/* The next definitions, else the system call. */
static inline void *mapped_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *(*next)(void *, size_t, int, int, int, off_t) =
	    __atomic_load_n(&gfp_mapped_next.mmap, __ATOMIC_RELAXED);
	return next ? next(addr, len, prot, flags, fd, off)
	            : (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static inline int mapped_sys_munmap(void *addr, size_t len)
{
	int (*next)(void *, size_t) = __atomic_load_n(&gfp_mapped_next.munmap, __ATOMIC_RELAXED);
	return next ? next(addr, len) : (int)syscall(SYS_munmap, addr, len);
}

static inline void *mapped_sys_mremap(void *old, size_t old_len, size_t new_len, int flags,
                                      void *new_addr)
{
	void *(*next)(void *, size_t, size_t, int, ...) =
	    __atomic_load_n(&gfp_mapped_next.mremap, __ATOMIC_RELAXED);
	return next ? next(old, old_len, new_len, flags, new_addr)
	            : (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

static inline int mapped_sys_mprotect(void *addr, size_t len, int prot)
{
	int (*next)(void *, size_t, int) =
	    __atomic_load_n(&gfp_mapped_next.mprotect, __ATOMIC_RELAXED);
	return next ? next(addr, len, prot) : (int)syscall(SYS_mprotect, addr, len, prot);
}

/* The break as the kernel has it; glibc's brk and sbrk, once found. */
static inline void *mapped_sys_sbrk(intptr_t incr)
{
	void *(*next)(intptr_t) = __atomic_load_n(&gfp_mapped_next.sbrk, __ATOMIC_RELAXED);
	if (next)
		return next(incr);
	uintptr_t cur = (uintptr_t)syscall(SYS_brk, 0);
	if (incr && (uintptr_t)syscall(SYS_brk, cur + (uintptr_t)incr) != cur + (uintptr_t)incr) {
		errno = ENOMEM;
		return (void *)-1;
	}
	return (void *)cur;
}

static inline int mapped_sys_brk(void *addr)
{
	int (*next)(void *) = __atomic_load_n(&gfp_mapped_next.brk, __ATOMIC_RELAXED);
	if (next)
		return next(addr);
	if ((uintptr_t)syscall(SYS_brk, addr) < (uintptr_t)addr) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

#pragma GCC visibility pop

#endif /* GFP_MAPPED_H */
