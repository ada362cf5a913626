/*
 * mapped_sys.h - mapped_sys.c: the memory calls themselves, past the shim's
 * wrappers (preload/mapcalls.c): libc's, or the system call.
 */
#ifndef GFP_MAPPED_SYS_H
#define GFP_MAPPED_SYS_H

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#pragma GCC visibility push(hidden)

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
extern struct mapped_next mapped_sys_next;

/* The next definitions, else the system call. */
static inline void *mapped_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *(*next)(void *, size_t, int, int, int, off_t) =
	    __atomic_load_n(&mapped_sys_next.mmap, __ATOMIC_RELAXED);
	return next ? next(addr, len, prot, flags, fd, off)
	            : (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static inline int mapped_sys_munmap(void *addr, size_t len)
{
	int (*next)(void *, size_t) = __atomic_load_n(&mapped_sys_next.munmap, __ATOMIC_RELAXED);
	return next ? next(addr, len) : (int)syscall(SYS_munmap, addr, len);
}

static inline void *mapped_sys_mremap(void *old, size_t old_len, size_t new_len, int flags,
                                      void *new_addr)
{
	void *(*next)(void *, size_t, size_t, int, ...) =
	    __atomic_load_n(&mapped_sys_next.mremap, __ATOMIC_RELAXED);
	return next ? next(old, old_len, new_len, flags, new_addr)
	            : (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

static inline int mapped_sys_mprotect(void *addr, size_t len, int prot)
{
	int (*next)(void *, size_t, int) =
	    __atomic_load_n(&mapped_sys_next.mprotect, __ATOMIC_RELAXED);
	return next ? next(addr, len, prot) : (int)syscall(SYS_mprotect, addr, len, prot);
}

/* The break as the kernel has it; glibc's brk and sbrk, once found. */
static inline void *mapped_sys_sbrk(intptr_t incr)
{
	void *(*next)(intptr_t) = __atomic_load_n(&mapped_sys_next.sbrk, __ATOMIC_RELAXED);
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
	int (*next)(void *) = __atomic_load_n(&mapped_sys_next.brk, __ATOMIC_RELAXED);
	if (next)
		return next(addr);
	if ((uintptr_t)syscall(SYS_brk, addr) < (uintptr_t)addr) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

#pragma GCC visibility pop

#endif /* GFP_MAPPED_SYS_H */
