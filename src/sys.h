/*
 * sys.h - sys.c: the engine's own system calls.
 */
#ifndef GFP_SYS_H
#define GFP_SYS_H

#include <stddef.h>
#include <sys/mman.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* As libc's calls of these names: -1 (MAP_FAILED for sys_mmap) and errno
 * on failure. */
void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int sys_munmap(void *addr, size_t len);
int sys_madvise(void *addr, size_t len, int advice);
/* The process ends here, as libc's _exit ends it, and nothing else runs:
 * no report, no leaving the tree (the caller does what it needs first). */
__attribute__((noreturn)) void sys_exit_group(int status);

#pragma GCC visibility pop

#endif /* GFP_SYS_H */
