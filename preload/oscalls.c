/*
 * oscalls.c - the system calls that can fail inside jemalloc's free, made to
 * leave errno alone there.
 *
 * glibc's free keeps errno (POSIX 2024 requires it); jemalloc 5.3's does not:
 * a purge whose madvise fails, or a metadata mmap that fails, sets errno
 * inside free. Saving and restoring errno around every free costs a stack
 * frame on the hottest call there is, so the shim does it where the failure
 * happens instead: jemalloc calls madvise and mmap through its PLT, they bind
 * to these, and a failing call made from jemalloc's own code puts errno back
 * as it found it. jemalloc reads only their return values. Calls from anyone
 * else pass through as if the shim were not there.
 *
 * munmap passes jemalloc's calls on untouched (mapcalls.c): jemalloc prints
 * errno when it fails, and on Linux it is not called from free unless
 * retain:false. Another library preloaded
 * before the shim that wraps mmap or madvise itself comes between jemalloc
 * and these, and unless it tail-calls them the caller seen here is not
 * jemalloc: errno is then left as the failing call set it.
 *
 * The program's own mmap calls (not jemalloc's, not the shim's) go to
 * src/mapped.c once it tracks mappings (gfp_mapped_on), which charges them
 * to the budget; until then the look at it is the one thing added.
 *
 * A failing mmap inside jemalloc also tells the budget routes that jemalloc
 * can fail small requests here (preload/malloc.c: budget_inner), and so does
 * a setrlimit or prlimit that limits the process's address space or data.
 *
 * pipe2 keeps libunwind's pipe out of the program's descriptors
 * (src/unwind_mem.c says why): refused while the shim initialises libunwind,
 * moved to the shim's numbers should libunwind open it again inside one of
 * the shim's backtraces. Calls from anyone else, and from libunwind for the
 * program, pass through.
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "fd.h"
#include "mapped.h"
#include "route.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*madvise_fn)(void *, size_t, int);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*pipe2_fn)(int[2], int);

/* The next definitions (libc's, or those of a wrapper preloaded after us),
 * found by the constructor. Before it, the system call itself: glibc's
 * wrappers of these add nothing to it on x86-64 and aarch64. */
static madvise_fn next_madvise;
static mmap_fn next_mmap;
static pipe2_fn next_pipe2;

static bool from_jemalloc(const void *pc)
{
	return gfp_from_jemalloc((uintptr_t)pc);
}

EXPORT int madvise(void *addr, size_t len, int advice)
{
	int saved = errno;
	madvise_fn next = __atomic_load_n(&next_madvise, __ATOMIC_RELAXED);
	int r = next ? next(addr, len, advice) : (int)syscall(SYS_madvise, addr, len, advice);
	if (r != 0 && from_jemalloc(__builtin_return_address(0)))
		errno = saved;
	return r;
}

static void *wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (unlikely(__atomic_load_n(&gfp_mapped_on, __ATOMIC_RELAXED)) && mapped_program_call(pc))
		return mapped_mmap(addr, len, prot, flags, fd, off, pc);
	int saved = errno;
	mmap_fn next = __atomic_load_n(&next_mmap, __ATOMIC_RELAXED);
	void *r = next ? next(addr, len, prot, flags, fd, off)
	               : (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (r == MAP_FAILED && from_jemalloc(__builtin_return_address(0))) {
		errno = saved;
		route_watch_jemalloc();
	}
	return r;
}

/* glibc's two names for one function (off_t is 64 bits here); by asm name,
 * since <sys/mman.h> may redirect `mmap` to mmap64. */
EXPORT void *export_mmap(void *, size_t, int, int, int, off_t) __asm__("mmap")
    __attribute__((alias("wrap_mmap")));
EXPORT void *export_mmap64(void *, size_t, int, int, int, off_t) __asm__("mmap64")
    __attribute__((alias("wrap_mmap")));

static bool from_libunwind(const void *pc)
{
	static struct link_map *libunwind; /* atomic */
	struct link_map *lu = __atomic_load_n(&libunwind, __ATOMIC_RELAXED);
	struct dl_find_object o;
	if (!lu) {
		void (*f)(void) = (void (*)(void))unw_init_local;
		void *addr;
		__builtin_memcpy(&addr, &f, sizeof(addr));
		if (_dl_find_object(addr, &o) != 0)
			return false;
		lu = o.dlfo_link_map;
		__atomic_store_n(&libunwind, lu, __ATOMIC_RELAXED);
	}
	return _dl_find_object((void *)pc, &o) == 0 && o.dlfo_link_map == lu;
}

EXPORT int pipe2(int fds[2], int flags)
{
	pipe2_fn next = __atomic_load_n(&next_pipe2, __ATOMIC_RELAXED);
	bool shim =
	    (gfp_tls.guard || gfp_tls.unwinding) && from_libunwind(__builtin_return_address(0));
	if (shim && !gfp_tls.unwinding) {
		errno = EMFILE;
		return -1;
	}
	int r = next ? next(fds, flags) : (int)syscall(SYS_pipe2, fds, flags);
	if (r == 0 && shim) {
		fds[0] = gfp_fd_lift(fds[0]);
		fds[1] = gfp_fd_lift(fds[1]);
	}
	return r;
}

/* A limit jemalloc's mappings count against, set on this process. */
static void limits_changed(int resource, const struct rlimit *r)
{
	if (r && (resource == RLIMIT_AS || resource == RLIMIT_DATA) && r->rlim_cur != RLIM_INFINITY)
		route_watch_jemalloc();
}

typedef int (*prlimit_fn)(pid_t, int, const struct rlimit *, struct rlimit *);

/* glibc's setrlimit and prlimit, and their 64 names (one function each
 * here, rlim_t being 64 bits), are all prlimit64 system calls. */
static int wrap_prlimit(pid_t pid, int resource, const struct rlimit *new, struct rlimit *old)
{
	int r = (int)syscall(SYS_prlimit64, pid, resource, new, old);
	if (r == 0 && (pid == 0 || pid == getpid()))
		limits_changed(resource, new);
	return r;
}

static int wrap_setrlimit(int resource, const struct rlimit *r)
{
	return wrap_prlimit(0, resource, r, NULL);
}

EXPORT int export_prlimit(pid_t, int, const struct rlimit *, struct rlimit *) __asm__("prlimit")
    __attribute__((alias("wrap_prlimit")));
EXPORT int export_prlimit64(pid_t, int, const struct rlimit *, struct rlimit *) __asm__("prlimit64")
    __attribute__((alias("wrap_prlimit")));
EXPORT int export_setrlimit(int, const struct rlimit *) __asm__("setrlimit")
    __attribute__((alias("wrap_setrlimit")));
EXPORT int export_setrlimit64(int, const struct rlimit *) __asm__("setrlimit64")
    __attribute__((alias("wrap_setrlimit")));

__attribute__((constructor(101))) static void oscalls_init(void)
{
	gfp_tls.guard++; /* dlsym may allocate its error state */
	void *m = dlsym(RTLD_NEXT, "madvise"), *p = dlsym(RTLD_NEXT, "mmap"),
	     *q = dlsym(RTLD_NEXT, "pipe2");
	gfp_tls.guard--;
	madvise_fn mf;
	mmap_fn pf;
	pipe2_fn qf;
	__builtin_memcpy(&mf, &m, sizeof(m));
	__builtin_memcpy(&pf, &p, sizeof(p));
	__builtin_memcpy(&qf, &q, sizeof(q));
	__atomic_store_n(&next_madvise, mf, __ATOMIC_RELAXED);
	__atomic_store_n(&next_mmap, pf, __ATOMIC_RELAXED);
	__atomic_store_n(&next_pipe2, qf, __ATOMIC_RELAXED);
}
