/*
 * mapped_ranges.c - the table of the ranges a program mapped itself
 * (mapped.c): a treap of disjoint ranges ordered by start (a search, an
 * insertion or a removal costs a few dozen steps, for the hundreds of
 * ranges a pool or pymalloc keeps as for the tens of thousands
 * vm.max_map_count allows), in memory of its own, never malloc's, with the
 * caller of the call that made each and the totals the report gives. The
 * caller holds mapped.c's lock.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

#include "profile_api.h"
#include "mapped_sys.h"
#include "mapped_ranges.h"

/* Its links are indexes into the node array, which can then move when it
 * grows. Index 0 is no node. */
static struct mapped_range *node;
static uint32_t root, free_list, high; /* free nodes are linked by left */
static size_t nr, cap;                 /* ranges, nodes (node[0] included) */
static uintptr_t page = 4096;
static uint32_t seed = 2463534242u;
static int64_t charged_bytes, held_bytes, charged_pieces, peak_bytes;

void mapped_ranges_page(uintptr_t size)
{
	page = size;
}

bool mapped_ranges_room(size_t want)
{
	if (cap && cap - 1 - nr >= want)
		return true;
	size_t ncap = cap ? cap * 2 : page / sizeof(struct mapped_range);
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

/* Once mapped_ranges_room said so. */
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
	node[n] = (struct mapped_range){start, end, idx, charged, 0, 0, seed};
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
	const struct mapped_range *r = &node[n];
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

int64_t mapped_ranges_bytes(uintptr_t a, uintptr_t b, bool charged)
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

/* A hole in one range splits it; without room for the second half that
 * half is forgotten too (and credited: it is then untracked, and its own
 * munmap later credits nothing). */
struct mapped_carved mapped_ranges_carve(uintptr_t a, uintptr_t b)
{
	struct mapped_carved c = {0};
	uint32_t n = first_within(a, b);
	if (!n)
		return c;
	c.found = true;
	c.idx = node[n].idx;
	c.was_charged = node[n].charged;
	if (node[n].start < a && node[n].end > b && mapped_ranges_room(1)) {
		uint32_t m = node_new(b, node[n].end, node[n].idx, node[n].charged);
		node[n].end = a;
		tree_add(m);
		count_piece(n, -(int64_t)(b - a), 1);
		c.charged = node[n].charged ? (int64_t)(b - a) : 0;
		return c;
	}
	while (n) {
		uint32_t next = next_within(n, b);
		struct mapped_range *r = &node[n];
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

bool mapped_ranges_insert(uintptr_t a, uintptr_t b, uint32_t idx, bool charged)
{
	if (a >= b || !mapped_ranges_room(1))
		return false;
	uint32_t n = node_new(a, b, idx, charged);
	tree_add(n);
	count_piece(n, (int64_t)(b - a), 1);
	return true;
}

int64_t mapped_ranges_commit(uintptr_t a, uintptr_t b)
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

const struct mapped_range *mapped_ranges_at(uintptr_t a)
{
	uint32_t n = range_at(a);
	return n ? &node[n] : NULL;
}

const struct mapped_range *mapped_ranges_first(uintptr_t a, uintptr_t b)
{
	uint32_t n = first_within(a, b);
	return n ? &node[n] : NULL;
}

struct mapped_totals mapped_ranges_totals(void)
{
	return (struct mapped_totals){charged_bytes, peak_bytes, charged_pieces, held_bytes};
}
