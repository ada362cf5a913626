/*
 * unwind_reserve.c - address space kept for naming frames.
 *
 * Naming a function maps parts of its object's file (the ELF header, the
 * section headers, the symbol tables), which fails when memory ran out for
 * real (ulimit -v). So the shim keeps a little address space in reserve,
 * like PF_MEMALLOC's reserves, and maps those parts over it: MAP_FIXED on
 * its own PROT_NONE pages, which the kernel's RLIMIT_AS check counts as a
 * replacement, not as more (mmap_region subtracts the pages it unmaps). A
 * part goes back to PROT_NONE the same way once read. The reserve itself
 * is never unmapped: lent by munmap, its address space went to whichever
 * thread mapped next, and the report being named lost its names.
 *
 * One naming at a time holds it (holder: the thread's gfp_tls). A signal
 * handler on that thread runs to its end inside the naming it interrupted,
 * so it may map there too: its parts lie above those of the interrupted
 * naming, because the top moves by atomic adds, and the top goes back to
 * 0 only when no part is in use.
 */
#include <sys/mman.h>

#include "thread.h"
#include "unwind_reserve.h"
#include "sys.h"

#define RESERVE_BYTES (8u << 20)
static char *reserve;
static size_t reserve_len;
static const struct gfp_tls *holder; /* atomic */
static size_t top;                   /* atomic: the parts in use end below */
static unsigned parts;               /* atomic: parts in use */
/* A part that could not be mapped or given back may have left a hole
 * (a failed MAP_FIXED unmaps first), which another mapping may fill: the
 * reserve is then never mapped over again. */
static bool broken; /* atomic */

/* As much of the reserve as fits, halving down to 256K. */
void unwind_reserve_init(void)
{
	for (size_t len = RESERVE_BYTES; len >= (256u << 10); len /= 2) {
		void *p = sys_mmap(NULL, len, PROT_NONE,
		                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			reserve = p;
			reserve_len = len;
			return;
		}
	}
}

bool unwind_reserve_hold(void)
{
	const struct gfp_tls *none = NULL;
	return reserve && __atomic_compare_exchange_n(&holder, &none, &gfp_tls, false,
	                                              __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void unwind_reserve_release(void)
{
	__atomic_store_n(&holder, NULL, __ATOMIC_RELEASE);
}

static void part_done(void)
{
	if (__atomic_sub_fetch(&parts, 1, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&top, 0, __ATOMIC_RELAXED);
}

void *unwind_reserve_map(size_t len, int fd, off_t off)
{
	if (__atomic_load_n(&holder, __ATOMIC_RELAXED) != &gfp_tls ||
	    __atomic_load_n(&broken, __ATOMIC_RELAXED))
		return NULL;
	__atomic_add_fetch(&parts, 1, __ATOMIC_RELAXED);
	size_t at = __atomic_fetch_add(&top, len, __ATOMIC_RELAXED);
	if (len > reserve_len || at > reserve_len - len) {
		__atomic_fetch_sub(&top, len, __ATOMIC_RELAXED);
		part_done();
		return NULL;
	}
	void *p = sys_mmap(reserve + at, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, off);
	if (p == MAP_FAILED) {
		__atomic_store_n(&broken, true, __ATOMIC_RELAXED);
		part_done();
		return NULL;
	}
	return p;
}

void unwind_reserve_unmap(void *p, size_t len)
{
	if (sys_mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
	             0) == MAP_FAILED)
		__atomic_store_n(&broken, true, __ATOMIC_RELAXED);
	part_done();
}

/* A thread that held the reserve at the fork does not exist in the child:
 * the naming it did there is over. */
void unwind_reserve_atfork_child(void)
{
	if (__atomic_load_n(&holder, __ATOMIC_RELAXED) == &gfp_tls)
		return;
	__atomic_store_n(&holder, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&parts, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&top, 0, __ATOMIC_RELAXED);
}
