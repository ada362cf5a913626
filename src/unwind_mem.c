/*
 * unwind_mem.c - how libunwind reads the program's memory: without a
 * descriptor of its own.
 *
 * libunwind checks every address it reads while it unwinds (Debian's is
 * built with conservative checks) by writing a byte from it into a pipe:
 * up to 1.6 one pipe for the process, opened when it initialises, opened
 * again whenever a read from it fails, and kept (1.8 keeps one per thread).
 * Two descriptors at the lowest free numbers of every process under a
 * policy: a program that lists its descriptors sees them, one that passes
 * descriptors by number to a child finds its own moved up, and one that
 * closes every descriptor from 3 up (closefrom, CPython's children) and
 * opens its own files gets them read from, written into and closed by
 * libunwind at its next backtrace.
 *
 * The local address space's reader (a public accessor, unw_get_accessors)
 * is replaced with one that asks the kernel instead: rt_sigprocmask with an
 * invalid `how` copies the set from the address, fails with EFAULT when it
 * cannot be read, and with EINVAL, changing nothing, when it can (as
 * Abseil's AddressIsReadable). The pipe libunwind opens as it initialises
 * is refused (preload/oscalls.c: pipe2) and never asked for again. Where the
 * kernel does not answer so (a seccomp filter), libunwind keeps its reader,
 * and its pipe goes to the shim's numbers (gfp_fd_lift).
 *
 * Every reader of the local address space is replaced, the program's own
 * use of libunwind included: it then reads an unreadable address as an
 * error where libunwind, told not to check, would have faulted.
 *
 * Must never: allocate or take a lock (it runs in signal handlers), change
 * errno.
 */
#define UNW_LOCAL_ONLY
#include <errno.h>
#include <libunwind.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unwind_mem.h"

typedef int (*access_mem_fn)(unw_addr_space_t, unw_word_t, unw_word_t *, int, void *);
static access_mem_fn libunwind_access_mem;
static uintptr_t page_mask;

/* The pages a thread found readable last: a backtrace reads a few stack
 * pages and the unwind tables over and over. A thread's own, as libunwind's
 * cache of four is (its global one is shared by every thread). */
#define READABLE_PAGES 4
static __thread uintptr_t readable[READABLE_PAGES] __attribute__((tls_model("initial-exec")));
static __thread unsigned readable_next __attribute__((tls_model("initial-exec")));

/* The kernel's signal set is one word: it reads what libunwind would. */
_Static_assert(_NSIG / 8 == sizeof(unw_word_t), "rt_sigprocmask reads a word");

/* 0 when the kernel could read the word at addr, else its errno. */
static int kernel_read_check(const void *addr)
{
	int saved = errno;
	long r = syscall(SYS_rt_sigprocmask, ~0, addr, NULL, (size_t)(_NSIG / 8));
	int e = r == 0 ? 0 : errno;
	errno = saved;
	return e == EINVAL ? 0 : e ? e : EINVAL;
}

static bool word_readable(uintptr_t addr)
{
	uintptr_t page = addr & page_mask;
	bool one_page = ((addr + sizeof(unw_word_t) - 1) & page_mask) == page;
	for (unsigned i = 0; one_page && i < READABLE_PAGES; i++)
		if (readable[i] == page)
			return true;
	if (kernel_read_check((const void *)addr) != 0)
		return false;
	if (one_page)
		readable[readable_next++ % READABLE_PAGES] = page;
	return true;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	if (write)
		return libunwind_access_mem(as, addr, val, write, arg);
	if (!addr || !word_readable((uintptr_t)addr))
		return -UNW_EINVAL;
	memcpy(val, (const void *)(uintptr_t)addr, sizeof(*val));
	return 0;
}

void unwind_mem_init(void)
{
	unw_accessors_t *acc = unw_get_accessors(unw_local_addr_space);
	if (!acc || !acc->access_mem || acc->access_mem == access_mem)
		return;
	/* Only where the kernel answers as described: the set's size must be
	 * the kernel's, and no filter may refuse the call. */
	unw_word_t word = 0;
	if (kernel_read_check((const void *)sizeof(word)) != EFAULT ||
	    kernel_read_check(&word) != 0)
		return;
	page_mask = ~((uintptr_t)getpagesize() - 1);
	libunwind_access_mem = acc->access_mem;
	__atomic_store_n(&acc->access_mem, access_mem, __ATOMIC_RELEASE);
}
