/*
 * mapcalls.c - the calls by which a program maps memory itself, beside
 * malloc: munmap, mremap, mprotect, brk, sbrk and __sbrk (mmap is
 * oscalls.c's, as jemalloc's own calls need it too). Each passes straight
 * on, after one look at gfp_mapped_on, until the shim tracks mappings; then
 * the program's own calls go to src/mapped.c, which charges them to the
 * budget. Calls from jemalloc and from the shim itself always pass.
 *
 * glibc and ld.so reach these system calls inside libc, never through
 * these names: thread stacks, dlopen's libraries and glibc's own buffers
 * are not seen, nor is a program that makes the system call itself.
 */
#include <dlfcn.h>
#include <stdarg.h>

#include "internal.h"
#include "mapped.h"
#include "mapped_sys.h"

#define EXPORT __attribute__((visibility("default")))

static inline bool program_call(uintptr_t pc)
{
	return unlikely(__atomic_load_n(&gfp_mapped_on, __ATOMIC_RELAXED)) &&
	       mapped_program_call(pc);
}

EXPORT int munmap(void *addr, size_t len)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (program_call(pc))
		return mapped_munmap(addr, len);
	return mapped_sys_munmap(addr, len);
}

/* glibc reads the fifth argument only with MREMAP_FIXED. */
EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	void *new_addr = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (program_call(pc))
		return mapped_mremap(old, old_len, new_len, flags, new_addr, pc);
	return mapped_sys_mremap(old, old_len, new_len, flags, new_addr);
}

EXPORT int mprotect(void *addr, size_t len, int prot)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (program_call(pc))
		return mapped_mprotect(addr, len, prot, pc);
	return mapped_sys_mprotect(addr, len, prot);
}

EXPORT int brk(void *addr)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (program_call(pc))
		return mapped_brk(addr, pc);
	return mapped_sys_brk(addr);
}

static void *wrap_sbrk(intptr_t incr)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (program_call(pc))
		return mapped_sbrk(incr, pc);
	return mapped_sys_sbrk(incr);
}

/* glibc exports sbrk under a second name, which old allocators call. */
EXPORT void *export_sbrk(intptr_t) __asm__("sbrk") __attribute__((alias("wrap_sbrk")));
EXPORT void *export___sbrk(intptr_t) __asm__("__sbrk") __attribute__((alias("wrap_sbrk")));

static void *next(const char *name)
{
	gfp_tls.guard++; /* dlsym may allocate its error state */
	void *f = dlsym(RTLD_NEXT, name);
	gfp_tls.guard--;
	return f;
}

#define FIND(field, name)                                                                          \
	do {                                                                                       \
		void *p = next(name);                                                              \
		__typeof__(mapped_sys_next.field) f;                                               \
		__builtin_memcpy(&f, &p, sizeof(p));                                               \
		__atomic_store_n(&mapped_sys_next.field, f, __ATOMIC_RELAXED);                     \
	} while (0)

__attribute__((constructor(101))) static void mapcalls_init(void)
{
	FIND(mmap, "mmap");
	FIND(munmap, "munmap");
	FIND(mremap, "mremap");
	FIND(mprotect, "mprotect");
	FIND(brk, "brk");
	FIND(sbrk, "sbrk");
}
