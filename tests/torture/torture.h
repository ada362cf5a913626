/*
 * torture.h - the data every torture case moves between threads: a block
 * whose bytes are a stream drawn from its seed, so that whoever frees it
 * (another thread, a signal handler, after the library that made it was
 * unloaded) checks every byte first. Shared with torture_plugin.c, which
 * makes blocks the same way.
 */
#ifndef TORTURE_H
#define TORTURE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TT_MAGIC 0x7e57b10cu
#define TT_DEAD  0xdeadb10cu

struct tt_blk {
	uint32_t magic;      /* TT_MAGIC while live, TT_DEAD once freed */
	uint32_t len;        /* bytes in data[] */
	uint64_t seed;       /* data[] is tt_stream(seed) */
	struct tt_blk *next; /* for the lists a case keeps; not checked */
	unsigned char data[];
};

/* splitmix64: one word of the stream. */
static inline uint64_t tt_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Writes the first n bytes of seed's stream. */
static inline void tt_fill(unsigned char *d, size_t n, uint64_t seed)
{
	uint64_t s = seed;
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = tt_next(&s);
		memcpy(d + i, &w, n - i < 8 ? n - i : 8);
	}
}

/* The offset of the first byte of d[0..n) that differs from seed's stream,
 * or n when none does. */
static inline size_t tt_diff(const unsigned char *d, size_t n, uint64_t seed)
{
	uint64_t s = seed;
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = tt_next(&s);
		if (memcmp(d + i, &w, n - i < 8 ? n - i : 8) != 0) {
			while (i < n && d[i] == ((const unsigned char *)&w)[i % 8])
				i++;
			return i;
		}
	}
	return n;
}

/* Makes b a live block of len bytes of seed's stream. */
static inline void tt_init(struct tt_blk *b, size_t len, uint64_t seed)
{
	b->magic = TT_MAGIC;
	b->len = (uint32_t)len;
	b->seed = seed;
	b->next = NULL;
	tt_fill(b->data, len, seed);
}

/* What a block adds to a ledger's checksum: its identity, not its address. */
static inline uint64_t tt_tag(uint64_t seed, uint32_t len)
{
	uint64_t s = seed ^ ((uint64_t)len << 32);
	return tt_next(&s);
}

#endif /* TORTURE_H */
