/*
 * mapped.c - the memory a program maps itself, charged to the budget as its
 * malloc blocks are: pymalloc's arenas, custom pools, sbrk heaps.
 *
 * What is charged follows the kernel's commit accounting (mm/mmap.c:
 * accountable_mapping; mm/mprotect.c: mprotect_fixup; mm/mremap.c:
 * vma_to_resize): a private anonymous mapping that is writable and not
 * MAP_NORESERVE (which the kernel honours unless vm.overcommit_memory is 2),
 * from its mmap or mremap, or from the mprotect that first makes it
 * writable, until munmap, a MAP_FIXED mapping over it or mremap takes it
 * away; and the growth of the break. A private anonymous mapping that is not
 * writable yet (a PROT_NONE reservation) is tracked uncharged, and charged
 * where an mprotect commits it. Taking write access away charges nothing
 * back, nor does madvise(MADV_DONTNEED): the kernel's commit stays too.
 * Shared, file-backed and hugetlb mappings are not charged. Only calls that
 * reach libc's exported functions are seen: glibc's own (thread stacks,
 * ld.so's libraries) and raw system calls are not.
 *
 * A call of the program's is decided as a request of its size with the
 * thread's context (a large mapping is a costly request), through the slow
 * path (req->mapping: budget_direct_attempt is its attempt), before the
 * system call; refused, it fails with ENOMEM and the table is unchanged.
 * What the call then changed is what the range table says, under its lock,
 * across the system call (so that an address the kernel frees is never given
 * to another thread's mapping before the table forgets it): the charge made
 * in advance is corrected by the difference, so that the budget's count
 * equals the table's whenever no call is under way, however ranges were
 * split, replaced, moved or unmapped twice.
 *
 * The table is a treap of disjoint ranges (a search, an insertion or a
 * removal costs a few dozen steps, for the hundreds of ranges a pool or
 * pymalloc keeps as for the tens of thousands vm.max_map_count allows) in
 * memory of its own, never malloc's, with the caller of the call that made
 * each: stats=sites counts a caller's mapped bytes as live bytes in its
 * allocinfo row. Its lock is taken with the guard up and never across the
 * slow path; a call that finds the guard up (a signal handler on a thread
 * inside the shim) passes untracked.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "mapped.h"
#include "mapped_ranges.h"
#include "mapped_sys.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

bool gfp_mapped_on;

/* New mappings are tracked and charged (limit.mapped); old ones are
 * credited whatever it says now. */
static bool tracking;         /* atomic */
static bool overcommit_never; /* vm.overcommit_memory 2: MAP_NORESERVE is ignored */
static uintptr_t page = 4096;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Atomic: for the report. */
static uint64_t calls, failures;

bool mapped_program_call(uintptr_t pc)
{
	return !gfp_tls.guard && !gfp_tls.unwinding && !gfp_from_jemalloc(pc) && !site_in_shim(pc);
}

static inline uintptr_t page_up(uintptr_t n)
{
	return (n + page - 1) & ~(page - 1);
}

/* ------------------------------------------------------------------------
 * Charging and counting
 * ---------------------------------------------------------------------- */

/* Charges `bytes` before a call of `entry` from `caller` adds them: the
 * budget's decision in the thread's context, the slow path when it
 * refuses. False: the call is to fail with ENOMEM. */
static bool charge(int64_t bytes, enum gfp_entry entry, uintptr_t caller)
{
	if (bytes <= 0)
		return true;
	if (gfp_budget_on && gfp_tls.mode == GFP_TLS_UNDECIDED)
		thread_enter(true);
	/* No budget, or a thread the policy does not decide for (past its
	 * exit): counted, not decided, as its malloc would be. */
	if (!gfp_budget_on || gfp_tls.mode != GFP_TLS_POLICY || gfp_tls.exiting) {
		budget_direct_adjust(bytes);
		return true;
	}
	struct gfp_req req = {
	    .entry = entry, .size = (size_t)bytes, .caller = caller, .mapping = true};
	if (gfp_tls.in_reclaim) { /* a shrinker's own mapping: PF_MEMALLOC */
		context_resolve(&req);
		if (!(req.gfp & GFP_NOMEMALLOC))
			req.gfp |= GFP_MEMALLOC;
	}
	return slowpath_attempt(&req, req.gfp) || slowpath_run(&req);
}

/* One call of `entry` that the table saw: `bytes` it added, or its failure. */
static void count_call(enum gfp_entry entry, uint32_t idx, int64_t bytes, bool failed)
{
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (failed)
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	if (!gfp_policy.stats || !gfp_tls.thread)
		return;
	struct gfp_entry_stats *s = &gfp_tls.stats[entry];
	gfp_count(&s->calls, 1);
	if (failed)
		gfp_count(&s->failures, 1);
	else if (bytes > 0)
		gfp_count(&s->bytes, (uint64_t)bytes);
	if (idx)
		profile_mapped_call(idx, bytes > 0 ? (uint64_t)bytes : 0, failed);
}

static uint32_t caller_idx(uintptr_t caller)
{
	return gfp_meaning.profile ? profile_mapped_caller(caller) : 0;
}

/* After a call: the table's change `delta` replaces the charge made in
 * advance. errno stays as the call left it. */
static void settle(int64_t delta, int64_t charged)
{
	int saved = errno;
	budget_direct_adjust(delta - charged);
	errno = saved;
}

/* ------------------------------------------------------------------------
 * The calls
 * ---------------------------------------------------------------------- */

void *mapped_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, uintptr_t caller)
{
	bool anon_private = (flags & MAP_ANONYMOUS) && (flags & MAP_TYPE) == MAP_PRIVATE;
	bool track = anon_private && !(flags & MAP_HUGETLB) &&
	             (!(flags & MAP_NORESERVE) || overcommit_never) &&
	             __atomic_load_n(&tracking, __ATOMIC_RELAXED);
	/* Only a MAP_FIXED mapping can take the place of a tracked one. */
	bool fixed = (flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE);
	if ((!track && !fixed) || len == 0 || len > SIZE_MAX - page)
		return mapped_sys_mmap(addr, len, prot, flags, fd, off);
	int saved = errno;
	uintptr_t a = (uintptr_t)addr, plen = page_up(len);
	bool charged = track && (prot & PROT_WRITE);
	uint32_t idx = track ? caller_idx(caller) : 0;
	int64_t pre = 0;
	if (charged) {
		/* What it replaces is charged already (mmap_region's nr_accounted). */
		pre = (int64_t)plen;
		if (fixed) {
			gfp_lock(&lock);
			pre -= mapped_ranges_bytes(a, a + plen, true);
			gfp_unlock(&lock);
		}
		if (!charge(pre, GFP_E_mmap, caller)) {
			count_call(GFP_E_mmap, idx, 0, true);
			errno = ENOMEM;
			return MAP_FAILED;
		}
	}
	gfp_lock(&lock);
	void *r = MAP_FAILED;
	int64_t delta = 0;
	if (mapped_ranges_room(3))
		r = mapped_sys_mmap(addr, len, prot, flags, fd, off);
	else
		errno = ENOMEM;
	if (r != MAP_FAILED) {
		uintptr_t s = (uintptr_t)r;
		delta -= mapped_ranges_carve(s, s + plen)
		             .charged; /* replaced, or forgotten by a raw munmap */
		if (track && mapped_ranges_insert(s, s + plen, idx, charged) && charged)
			delta += (int64_t)plen;
	}
	gfp_unlock(&lock);
	settle(delta, pre > 0 ? pre : 0);
	if (track)
		count_call(GFP_E_mmap, idx, charged ? (int64_t)plen : 0, r == MAP_FAILED);
	if (r != MAP_FAILED)
		errno = saved;
	return r;
}

int mapped_munmap(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	if (len == 0 || (a & (page - 1)) || len > SIZE_MAX - page)
		return mapped_sys_munmap(addr, len);
	uintptr_t b = a + page_up(len);
	gfp_lock(&lock);
	if (!mapped_ranges_first(a, b)) { /* nothing of ours */
		gfp_unlock(&lock);
		return mapped_sys_munmap(addr, len);
	}
	(void)mapped_ranges_room(1); /* a hole in one range; else carve forgets the rest */
	int r = mapped_sys_munmap(addr, len);
	int64_t delta = r == 0 ? -mapped_ranges_carve(a, b).charged : 0;
	gfp_unlock(&lock);
	settle(delta, 0);
	count_call(GFP_E_munmap, 0, 0, r != 0);
	return r;
}

void *mapped_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr,
                    uintptr_t caller)
{
	uintptr_t a = (uintptr_t)old, to = (uintptr_t)new_addr;
	bool fixed = flags & MREMAP_FIXED, keep = flags & MREMAP_DONTUNMAP;
	if ((a & (page - 1)) || old_len > SIZE_MAX - page || new_len > SIZE_MAX - page ||
	    new_len == 0)
		return mapped_sys_mremap(old, old_len, new_len, flags, new_addr);
	uintptr_t olen = page_up(old_len), nlen = page_up(new_len);
	int saved = errno;
	/* The mapping it moves, as the kernel finds it (vma_lookup(addr)). */
	gfp_lock(&lock);
	const struct mapped_range *at = mapped_ranges_at(a);
	bool ours = at != NULL;
	struct mapped_range was = ours ? *at : (struct mapped_range){0};
	int64_t pre = 0;
	if (ours && was.charged) /* vma_to_resize: VM_ACCOUNT grows by the difference */
		pre = keep ? (int64_t)nlen : (int64_t)nlen - (int64_t)olen;
	if (fixed && to <= UINTPTR_MAX - nlen)
		pre -= mapped_ranges_bytes(to, to + nlen, true); /* mremap_to unmaps it first */
	gfp_unlock(&lock);
	if (!ours && !fixed)
		return mapped_sys_mremap(old, old_len, new_len, flags, new_addr);
	if (!charge(pre, GFP_E_mremap, caller)) {
		count_call(GFP_E_mremap, was.idx, 0, true);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	gfp_lock(&lock);
	void *r = MAP_FAILED;
	int64_t delta = 0;
	if (mapped_ranges_room(4))
		r = mapped_sys_mremap(old, old_len, new_len, flags, new_addr);
	else
		errno = ENOMEM;
	if (r != MAP_FAILED) {
		uintptr_t s = (uintptr_t)r;
		if (fixed)
			delta -= mapped_ranges_carve(s, s + nlen).charged;
		/* The table now, not before the charge: another thread may
		 * have changed it meanwhile. */
		struct mapped_carved moved = {0};
		if (keep) {
			const struct mapped_range *k = mapped_ranges_at(a);
			moved = (struct mapped_carved){0, k != NULL, k ? k->idx : 0,
			                               k ? k->charged : 0};
		} else {
			moved = mapped_ranges_carve(a, a + olen);
			delta -= moved.charged;
		}
		delta -= mapped_ranges_carve(s, s + nlen).charged;
		if (moved.found &&
		    mapped_ranges_insert(s, s + nlen, moved.idx, moved.was_charged) &&
		    moved.was_charged)
			delta += (int64_t)nlen;
	}
	gfp_unlock(&lock);
	settle(delta, pre > 0 ? pre : 0);
	count_call(GFP_E_mremap, was.idx, pre > 0 ? pre : 0, r == MAP_FAILED);
	if (r != MAP_FAILED)
		errno = saved;
	return r;
}

int mapped_mprotect(void *addr, size_t len, int prot, uintptr_t caller)
{
	uintptr_t a = (uintptr_t)addr;
	/* Only write access commits (mprotect_fixup charges VM_WRITE). */
	if (!(prot & PROT_WRITE) || len == 0 || (a & (page - 1)) || len > SIZE_MAX - page)
		return mapped_sys_mprotect(addr, len, prot);
	uintptr_t b = a + page_up(len);
	gfp_lock(&lock);
	int64_t held = mapped_ranges_bytes(a, b, false);
	const struct mapped_range *first = mapped_ranges_first(a, b);
	uint32_t idx = first ? first->idx : 0;
	gfp_unlock(&lock);
	if (!held)
		return mapped_sys_mprotect(addr, len, prot);
	int saved = errno;
	if (!charge(held, GFP_E_mprotect, caller)) {
		count_call(GFP_E_mprotect, idx, 0, true);
		errno = ENOMEM;
		return -1;
	}
	gfp_lock(&lock);
	int r = -1;
	int64_t got = 0;
	if (mapped_ranges_room(2))
		r = mapped_sys_mprotect(addr, len, prot);
	else
		errno = ENOMEM; /* as the kernel's when it cannot split a mapping */
	if (r == 0)
		got = mapped_ranges_commit(a, b);
	gfp_unlock(&lock);
	settle(got, held);
	count_call(GFP_E_mprotect, idx, got, r != 0);
	if (r == 0)
		errno = saved;
	return r;
}

/* brk and sbrk: the break goes from where it is to `to` (sbrk: by incr).
 * The kernel's brk charges whole pages, and so does this; the pages the
 * break covers are a range of the table, charged, of the caller that
 * moved the break there. */
static void *move_break(bool by, intptr_t incr, void *to, enum gfp_entry entry, uintptr_t caller)
{
	int saved = errno;
	uint32_t idx = caller_idx(caller);
	gfp_lock(&lock);
	uintptr_t cur = (uintptr_t)mapped_sys_sbrk(0);
	gfp_unlock(&lock);
	uintptr_t want = by ? cur + (uintptr_t)incr : (uintptr_t)to;
	int64_t pre = page_up(want) > page_up(cur) ? (int64_t)(page_up(want) - page_up(cur)) : 0;
	if (!charge(pre, entry, caller)) {
		count_call(entry, idx, 0, true);
		errno = ENOMEM;
		return (void *)-1;
	}
	gfp_lock(&lock);
	cur = (uintptr_t)mapped_sys_sbrk(0); /* another thread may have moved it */
	void *r = by ? mapped_sys_sbrk(incr) : (void *)(intptr_t)mapped_sys_brk(to);
	int err = errno;
	uintptr_t now = (uintptr_t)mapped_sys_sbrk(0);
	int64_t delta = 0;
	if (page_up(now) > page_up(cur)) {
		if (mapped_ranges_insert(page_up(cur), page_up(now), idx, true))
			delta = (int64_t)(page_up(now) - page_up(cur));
	} else if (page_up(now) < page_up(cur)) {
		delta = -mapped_ranges_carve(page_up(now), page_up(cur)).charged;
	}
	gfp_unlock(&lock);
	errno = err;
	settle(delta, pre);
	bool failed = r == (void *)-1;
	count_call(entry, idx, delta, failed);
	if (!failed)
		errno = saved;
	return r;
}

int mapped_brk(void *addr, uintptr_t caller)
{
	return move_break(false, 0, addr, GFP_E_brk, caller) == (void *)-1 ? -1 : 0;
}

void *mapped_sbrk(intptr_t incr, uintptr_t caller)
{
	if (incr == 0)
		return mapped_sys_sbrk(0);
	return move_break(true, incr, NULL, GFP_E_sbrk, caller);
}

/* ------------------------------------------------------------------------
 * Policy, report, fork
 * ---------------------------------------------------------------------- */

void mapped_follow_policy(void)
{
	static bool ready;
	if (!ready) {
		long p = sysconf(_SC_PAGESIZE);
		if (p > 0)
			page = (uintptr_t)p;
		mapped_ranges_page(page);
		char c = 0;
		int saved = errno,
		    fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (read(fd, &c, 1) != 1)
				c = 0;
			close(fd);
		}
		errno = saved;
		overcommit_never = c == '2';
		ready = true;
	}
	bool on = gfp_policy.limit_mapped && (gfp_budget_on || gfp_policy.stats);
	__atomic_store_n(&tracking, on, __ATOMIC_RELAXED);
	if (on)
		__atomic_store_n(&gfp_mapped_on, true, __ATOMIC_RELEASE);
}

void mapped_report(struct gfp_buf *b)
{
	if (!__atomic_load_n(&gfp_mapped_on, __ATOMIC_ACQUIRE))
		return;
	gfp_lock(&lock);
	struct mapped_totals t = mapped_ranges_totals();
	gfp_unlock(&lock);
	gfp_buf_printf(
	    b,
	    ",\"mapped\":{\"live_bytes\":%lld,\"peak_bytes\":%lld,\"live_mappings\":%lld,"
	    "\"uncharged_bytes\":%lld,\"calls\":%llu,\"failures\":%llu",
	    (long long)t.charged, (long long)t.peak, (long long)t.pieces, (long long)t.held,
	    (unsigned long long)__atomic_load_n(&calls, __ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&failures, __ATOMIC_RELAXED));
	/* The whole the mapped part is of: what the budget counts. */
	if (gfp_budget_on)
		gfp_buf_printf(b, ",\"budget_live_bytes\":%lld", (long long)budget_process_live());
	gfp_buf_printf(b, "}");
}

void mapped_atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void mapped_atfork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

/* The child has the parent's mappings and its table; a charge another
 * thread made in advance of a call is not the child's. */
void mapped_atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	if (__atomic_load_n(&gfp_mapped_on, __ATOMIC_RELAXED))
		budget_direct_atfork_child(mapped_ranges_totals().charged);
}
