/*
 * mapped_ranges.h - mapped_ranges.c: the table of the program's own
 * mappings, under mapped.c's lock.
 */
#ifndef GFP_MAPPED_RANGES_H
#define GFP_MAPPED_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* A range of the table: a node of a treap ordered by start (the ranges
 * are disjoint, so by end too). */
struct mapped_range {
	uintptr_t start, end;
	uint32_t idx;     /* the caller's index (stats=sites), 0: none */
	uint32_t charged; /* else held: tracked, not charged yet */
	uint32_t left, right, prio;
};

struct mapped_carved {
	int64_t charged; /* charged bytes that went */
	bool found;
	uint32_t idx, was_charged; /* of the first range [a, b) overlapped */
};
struct mapped_totals {
	int64_t charged, peak, pieces, held; /* bytes, the most, ranges; uncharged bytes */
};

/* The page size, which the table's memory comes in (4096 until set). */
void mapped_ranges_page(uintptr_t size);
/* Room for `want` more ranges; false when no memory for it can be had. */
bool mapped_ranges_room(size_t want);
/* [a, b), where nothing is tracked now; false without room. */
bool mapped_ranges_insert(uintptr_t a, uintptr_t b, uint32_t idx, bool charged);
/* Forgets [a, b): the kernel has unmapped it, or mapped something else
 * there. */
struct mapped_carved mapped_ranges_carve(uintptr_t a, uintptr_t b);
/* The held parts of [a, b) become charged: their bytes (room for the two
 * splits at a and b was made). */
int64_t mapped_ranges_commit(uintptr_t a, uintptr_t b);
/* The charged bytes (held: the uncharged ones) of [a, b). */
int64_t mapped_ranges_bytes(uintptr_t a, uintptr_t b, bool charged);
/* The range of a; the first range that ends after a, if it starts below b.
 * NULL when none; valid until the table changes. */
const struct mapped_range *mapped_ranges_at(uintptr_t a);
const struct mapped_range *mapped_ranges_first(uintptr_t a, uintptr_t b);
struct mapped_totals mapped_ranges_totals(void);

#pragma GCC visibility pop

#endif /* GFP_MAPPED_RANGES_H */
