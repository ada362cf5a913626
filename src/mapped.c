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
 * path (req->mapping: budget_direct_charge is its attempt), before the
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

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

bool gfp_mapped_on;
struct mapped_next gfp_mapped_next;

/* New mappings are tracked and charged (limit.mapped); old ones are
 * credited whatever it says now. */
static bool tracking;         /* atomic */
static bool overcommit_never; /* vm.overcommit_memory 2: MAP_NORESERVE is ignored */
static uintptr_t page = 4096;

/* A range of the table: a node of a treap ordered by start (the ranges
 * are disjoint, so by end too), its links indexes into the node array,
 * which can then move when it grows. Index 0 is no node. */
struct range {
	uintptr_t start, end;
	uint32_t idx;     /* the caller's index (stats=sites), 0: none */
	uint32_t charged; /* else held: tracked, not charged yet */
	uint32_t left, right, prio;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Under lock. */
static struct range *node;
static uint32_t root, free_list, high; /* free nodes are linked by left */
static size_t nr, cap;                 /* ranges, nodes (node[0] included) */
static uint32_t seed = 2463534242u;
static int64_t charged_bytes, held_bytes, charged_pieces, peak_bytes;
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
 * The range table (under lock)
 * ---------------------------------------------------------------------- */

/* Room for `want` more ranges; false when no memory for it can be had. */
static bool room_for(size_t want)
{
	if (cap && cap - 1 - nr >= want)
		return true;
	size_t ncap = cap ? cap * 2 : page / sizeof(struct range);
	while (ncap - 1 - nr < want)
		ncap *= 2;
	if (ncap > UINT32_MAX)
		return false;
	void *m = node ? mapped_sys_mremap(node, cap * sizeof(*node), ncap * sizeof(*node),
	                                   MREMAP_MAYMOVE, NULL)
	               : mapped_sys_mmap(NULL, ncap * sizeof(*node), PROT_READ | PROT_WRITE,
	                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return false;
	node = m;
	cap = ncap;
	return true;
}

/* Once room_for said so. */
static uint32_t node_new(uintptr_t start, uintptr_t end, uint32_t idx, uint32_t charged)
{
	uint32_t n = free_list;
	if (n)
		free_list = node[n].left;
	else
		n = ++high;
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	node[n] = (struct range){start, end, idx, charged, 0, 0, seed};
	nr++;
	return n;
}

/* l gets the nodes of t that start below key, r the others. */
static void split(uint32_t t, uintptr_t key, uint32_t *l, uint32_t *r)
{
	if (!t) {
		*l = *r = 0;
	} else if (node[t].start < key) {
		split(node[t].right, key, &node[t].right, r);
		*l = t;
	} else {
		split(node[t].left, key, l, &node[t].left);
		*r = t;
	}
}

/* Every node of l starts below every node of r. */
static uint32_t merge(uint32_t l, uint32_t r)
{
	if (!l || !r)
		return l ? l : r;
	if (node[l].prio > node[r].prio) {
		node[l].right = merge(node[l].right, r);
		return l;
	}
	node[r].left = merge(l, node[r].left);
	return r;
}

static void tree_add(uint32_t n)
{
	uint32_t l, r;
	split(root, node[n].start, &l, &r);
	root = merge(merge(l, n), r);
}

static void tree_remove(uint32_t n)
{
	uint32_t l, m, r;
	split(root, node[n].start, &l, &m);
	split(m, node[n].start + 1, &m, &r);
	root = merge(l, r);
	node[n].left = free_list;
	free_list = n;
	nr--;
}

/* The range that starts after a, first. */
static uint32_t above(uintptr_t a)
{
	uint32_t best = 0;
	for (uint32_t t = root; t;)
		if (node[t].start > a)
			best = t, t = node[t].left;
		else
			t = node[t].right;
	return best;
}

/* The first range that ends after a. */
static uint32_t first_after(uintptr_t a)
{
	uint32_t best = 0;
	for (uint32_t t = root; t;)
		if (node[t].start <= a)
			best = t, t = node[t].right;
		else
			t = node[t].left;
	return best && node[best].end > a ? best : above(a);
}

/* The range of `a`: 0 when a is in none. */
static uint32_t range_at(uintptr_t a)
{
	uint32_t n = first_after(a);
	return n && node[n].start <= a ? n : 0;
}

/* The first range that ends after a, if it starts below b. */
static uint32_t first_within(uintptr_t a, uintptr_t b)
{
	uint32_t n = first_after(a);
	return n && node[n].start < b ? n : 0;
}

static uint32_t next_within(uint32_t n, uintptr_t b)
{
	n = above(node[n].start);
	return n && node[n].start < b ? n : 0;
}

/* Range n gains `bytes` (or loses them) and `pieces` ranges like it: the
 * totals and, when charged, its caller's row follow. */
static void count_piece(uint32_t n, int64_t bytes, int64_t pieces)
{
	const struct range *r = &node[n];
	if (!r->charged) {
		held_bytes += bytes;
		return;
	}
	charged_bytes += bytes;
	charged_pieces += pieces;
	if (charged_bytes > peak_bytes)
		peak_bytes = charged_bytes;
	if (r->idx)
		profile_live_add(r->idx, bytes, pieces);
}

/* The charged bytes (held: the uncharged ones) of [a, b). */
static int64_t bytes_within(uintptr_t a, uintptr_t b, bool charged)
{
	int64_t sum = 0;
	for (uint32_t n = first_within(a, b); n; n = next_within(n, b)) {
		uintptr_t s = node[n].start > a ? node[n].start : a;
		uintptr_t e = node[n].end < b ? node[n].end : b;
		if (!node[n].charged == !charged)
			sum += (int64_t)(e - s);
	}
	return sum;
}

struct carved {
	int64_t charged; /* charged bytes that went */
	bool found;
	uint32_t idx, was_charged; /* of the first range [a, b) overlapped */
};

/* Forgets [a, b): the kernel has unmapped it, or mapped something else
 * there. A hole in one range splits it; without room for the second half
 * that half is forgotten too (and credited: it is then untracked, and its
 * own munmap later credits nothing). */
static struct carved carve(uintptr_t a, uintptr_t b)
{
	struct carved c = {0};
	uint32_t n = first_within(a, b);
	if (!n)
		return c;
	c.found = true;
	c.idx = node[n].idx;
	c.was_charged = node[n].charged;
	if (node[n].start < a && node[n].end > b && room_for(1)) {
		uint32_t m = node_new(b, node[n].end, node[n].idx, node[n].charged);
		node[n].end = a;
		tree_add(m);
		count_piece(n, -(int64_t)(b - a), 1);
		c.charged = node[n].charged ? (int64_t)(b - a) : 0;
		return c;
	}
	while (n) {
		uint32_t next = next_within(n, b);
		struct range *r = &node[n];
		uintptr_t s = r->start > a ? r->start : a, e = r->end < b ? r->end : b;
		c.charged += r->charged ? (int64_t)(e - s) : 0;
		if (r->start < a) { /* its head stays (its tail too went: no room) */
			count_piece(n, -(int64_t)(r->end - a), 0);
			c.charged += r->charged ? (int64_t)(r->end - e) : 0;
			r->end = a;
		} else if (r->end > b) { /* its tail stays: still first of its own */
			count_piece(n, -(int64_t)(b - r->start), 0);
			r->start = b;
		} else {
			count_piece(n, -(int64_t)(r->end - r->start), -1);
			tree_remove(n);
		}
		n = next;
	}
	return c;
}

/* [a, b), where nothing is tracked now; false without room. */
static bool insert(uintptr_t a, uintptr_t b, uint32_t idx, bool charged)
{
	if (a >= b || !room_for(1))
		return false;
	uint32_t n = node_new(a, b, idx, charged);
	tree_add(n);
	count_piece(n, (int64_t)(b - a), 1);
	return true;
}

/* The held parts of [a, b) become charged: their bytes (room for the two
 * splits at a and b was made). */
static int64_t commit(uintptr_t a, uintptr_t b)
{
	int64_t got = 0;
	for (uint32_t n = first_within(a, b); n; n = next_within(n, b)) {
		if (node[n].charged)
			continue;
		/* The parts outside stay held: ranges of their own. */
		if (node[n].end > b) {
			tree_add(node_new(b, node[n].end, node[n].idx, 0));
			node[n].end = b;
		}
		if (node[n].start < a) {
			tree_add(node_new(a, node[n].end, node[n].idx, 0));
			node[n].end = a;
			continue; /* the next turn takes the part inside */
		}
		int64_t len = (int64_t)(node[n].end - node[n].start);
		count_piece(n, -len, 0);
		node[n].charged = 1;
		count_piece(n, len, 1);
		got += len;
	}
	return got;
}

/* ------------------------------------------------------------------------
 * Charging and counting
 * ---------------------------------------------------------------------- */

void *mapped_attempt(struct gfp_req *req, gfp_t f)
{
	static char token;
	if (!gfp_budget_on) { /* the limit went while it waited */
		budget_direct_adjust((int64_t)req->size);
		return &token;
	}
	return budget_direct_charge(req, f) ? &token : NULL;
}

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
	return gfp_attempt(&req, req.gfp) || gfp_slowpath(&req);
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
	return gfp_profile_on ? profile_mapped_caller(caller) : 0;
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
			pre -= bytes_within(a, a + plen, true);
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
	if (room_for(3))
		r = mapped_sys_mmap(addr, len, prot, flags, fd, off);
	else
		errno = ENOMEM;
	if (r != MAP_FAILED) {
		uintptr_t s = (uintptr_t)r;
		delta -= carve(s, s + plen).charged; /* replaced, or forgotten by a raw munmap */
		if (track && insert(s, s + plen, idx, charged) && charged)
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
	if (!first_within(a, b)) { /* nothing of ours */
		gfp_unlock(&lock);
		return mapped_sys_munmap(addr, len);
	}
	(void)room_for(1); /* a hole in one range; else carve forgets the rest */
	int r = mapped_sys_munmap(addr, len);
	int64_t delta = r == 0 ? -carve(a, b).charged : 0;
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
	uint32_t n = range_at(a);
	bool ours = n != 0;
	struct range was = ours ? node[n] : (struct range){0};
	int64_t pre = 0;
	if (ours && was.charged) /* vma_to_resize: VM_ACCOUNT grows by the difference */
		pre = keep ? (int64_t)nlen : (int64_t)nlen - (int64_t)olen;
	if (fixed && to <= UINTPTR_MAX - nlen)
		pre -= bytes_within(to, to + nlen, true); /* mremap_to unmaps it first */
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
	if (room_for(4))
		r = mapped_sys_mremap(old, old_len, new_len, flags, new_addr);
	else
		errno = ENOMEM;
	if (r != MAP_FAILED) {
		uintptr_t s = (uintptr_t)r;
		if (fixed)
			delta -= carve(s, s + nlen).charged;
		/* The table now, not before the charge: another thread may
		 * have changed it meanwhile. */
		struct carved moved = {0};
		if (keep) {
			uint32_t k = range_at(a);
			moved = (struct carved){0, k != 0, k ? node[k].idx : 0,
			                        k ? node[k].charged : 0};
		} else {
			moved = carve(a, a + olen);
			delta -= moved.charged;
		}
		delta -= carve(s, s + nlen).charged;
		if (moved.found && insert(s, s + nlen, moved.idx, moved.was_charged) &&
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
	int64_t held = bytes_within(a, b, false);
	uint32_t n = first_within(a, b), idx = n ? node[n].idx : 0;
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
	if (room_for(2))
		r = mapped_sys_mprotect(addr, len, prot);
	else
		errno = ENOMEM; /* as the kernel's when it cannot split a mapping */
	if (r == 0)
		got = commit(a, b);
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
		if (insert(page_up(cur), page_up(now), idx, true))
			delta = (int64_t)(page_up(now) - page_up(cur));
	} else if (page_up(now) < page_up(cur)) {
		delta = -carve(page_up(now), page_up(cur)).charged;
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
	int64_t live = charged_bytes, peak = peak_bytes, pieces = charged_pieces, held = held_bytes;
	gfp_unlock(&lock);
	gfp_buf_printf(
	    b,
	    ",\"mapped\":{\"live_bytes\":%lld,\"peak_bytes\":%lld,\"live_mappings\":%lld,"
	    "\"uncharged_bytes\":%lld,\"calls\":%llu,\"failures\":%llu",
	    (long long)live, (long long)peak, (long long)pieces, (long long)held,
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
		budget_direct_atfork_child(charged_bytes);
}
