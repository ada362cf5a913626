/*
 * sys.c - the engine's own system calls: the memory it maps for itself and
 * the end of the process. They never go through the shim's exports of the
 * same names (preload/oscalls.c, mapcalls.c, start.c), which stand between
 * the program, or jemalloc, and the kernel: the engine's mappings are never
 * the program's to charge (mapped.c), its failures are not jemalloc's, and
 * its _exit is not the program's. Nor do they reach a wrapper of these
 * names preloaded after the shim.
 *
 * Each is the system call and nothing else: glibc's wrappers of these add
 * nothing to it on x86-64 and aarch64, and syscall(2) sets errno as they
 * do. Nothing here may allocate, take a lock or call into the engine.
 */
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"

void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int sys_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

int sys_madvise(void *addr, size_t len, int advice)
{
	return (int)syscall(SYS_madvise, addr, len, advice);
}

void sys_exit_group(int status)
{
	for (;;)
		syscall(SYS_exit_group, status);
}
