/* The table of the program's own mappings (src/mapped_ranges.c): ranges
 * inserted charged or held, a hole that splits one, a commit of the held
 * part, a carve over everything, and the totals the report gives after
 * each. mapped.c holds its lock around these; this test has one thread. */
#include <stdint.h>

#include "check.h"
#include "mapped_ranges.h"

#define K(n) ((uintptr_t)(n) << 10)

static void totals(int64_t charged, int64_t pieces, int64_t held, int64_t peak)
{
	struct mapped_totals t = mapped_ranges_totals();
	CHECK(t.charged == charged);
	CHECK(t.pieces == pieces);
	CHECK(t.held == held);
	CHECK(t.peak == peak);
}

int main(void)
{
	mapped_ranges_page(4096);
	CHECK(mapped_ranges_at(K(64)) == NULL);
	CHECK(mapped_ranges_room(4));

	/* [64K, 128K) charged, [192K, 256K) held (PROT_NONE, say). */
	CHECK(mapped_ranges_insert(K(64), K(128), 0, true));
	CHECK(mapped_ranges_insert(K(192), K(256), 0, false));
	CHECK(!mapped_ranges_insert(K(300), K(300), 0, true)); /* empty */
	totals((int64_t)K(64), 1, (int64_t)K(64), (int64_t)K(64));
	CHECK(mapped_ranges_bytes(0, K(1024), true) == (int64_t)K(64));
	CHECK(mapped_ranges_bytes(0, K(1024), false) == (int64_t)K(64));
	CHECK(mapped_ranges_bytes(K(100), K(200), true) == (int64_t)K(28));
	CHECK(mapped_ranges_bytes(K(100), K(200), false) == (int64_t)K(8));

	const struct mapped_range *r = mapped_ranges_at(K(100));
	CHECK(r && r->start == K(64) && r->end == K(128) && r->charged);
	CHECK(mapped_ranges_at(K(128)) == NULL); /* ends are exclusive */
	CHECK(mapped_ranges_at(K(150)) == NULL);
	r = mapped_ranges_first(K(128), K(200));
	CHECK(r && r->start == K(192) && !r->charged);
	CHECK(mapped_ranges_first(K(128), K(192)) == NULL);

	/* munmap of [80K, 96K): a hole splits the range in two. */
	CHECK(mapped_ranges_room(1));
	struct mapped_carved c = mapped_ranges_carve(K(80), K(96));
	CHECK(c.found && c.was_charged && c.charged == (int64_t)K(16));
	totals((int64_t)K(48), 2, (int64_t)K(64), (int64_t)K(64));
	r = mapped_ranges_at(K(100));
	CHECK(r && r->start == K(96) && r->end == K(128));
	r = mapped_ranges_at(K(70));
	CHECK(r && r->start == K(64) && r->end == K(80));

	/* mprotect(PROT_WRITE) of [192K, 224K): that half of the held range
	 * is charged, the rest stays held. */
	CHECK(mapped_ranges_room(2));
	CHECK(mapped_ranges_commit(K(192), K(224)) == (int64_t)K(32));
	totals((int64_t)K(80), 3, (int64_t)K(32), (int64_t)K(80));
	r = mapped_ranges_at(K(230));
	CHECK(r && r->start == K(224) && !r->charged);
	r = mapped_ranges_at(K(200));
	CHECK(r && r->start == K(192) && r->end == K(224) && r->charged);
	/* Committing it again finds nothing held there. */
	CHECK(mapped_ranges_commit(K(192), K(224)) == 0);

	/* A carve over everything: every charged byte goes; the peak stays. */
	c = mapped_ranges_carve(0, K(1024));
	CHECK(c.found && c.charged == (int64_t)K(80));
	totals(0, 0, 0, (int64_t)K(80));
	CHECK(mapped_ranges_first(0, K(1024)) == NULL);
	c = mapped_ranges_carve(0, K(1024));
	CHECK(!c.found && c.charged == 0);

	/* Many ranges: the table grows past its first page of nodes and still
	 * finds each. */
	for (uintptr_t i = 0; i < 1000; i++) {
		CHECK(mapped_ranges_room(1));
		CHECK(mapped_ranges_insert(K(4096 + 8 * i), K(4096 + 8 * i + 4), 0, true));
	}
	totals((int64_t)K(4000), 1000, 0, (int64_t)K(4000));
	for (uintptr_t i = 0; i < 1000; i += 97) {
		r = mapped_ranges_at(K(4096 + 8 * i + 1));
		CHECK(r && r->start == K(4096 + 8 * i));
		CHECK(mapped_ranges_at(K(4096 + 8 * i + 5)) == NULL);
	}
	return CHECK_DONE();
}
