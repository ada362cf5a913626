/*
 * uninitprog - two error paths that read pointers the program never wrote,
 * the bug class gfp-sweep's junk fill exists for:
 *
 *   table_load: a table of NAMES strings in a fresh malloc block; when a
 *     strdup fails, the cleanup frees every slot, the ones after the
 *     failure never written;
 *   list_grow: a list of one slot, grown by realloc two slots at a time;
 *     when an item's malloc fails, the cleanup frees every slot up to the
 *     capacity, the ones the realloc added never written.
 *
 * Before them the program allocates and frees blocks of the same sizes
 * filled with zeros, so that without a fill the unwritten slots read as
 * NULL and free(NULL) passes: the crash shows only when fresh memory is
 * junk-filled. Prints one line per part, exits 1 when an allocation fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMES 8

static const char *const names[NAMES] = {"ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen"};

/* Zeroed blocks of the sizes below, freed: jemalloc hands them out again. */
static void zero_recycled(void)
{
	static const size_t sizes[] = {NAMES * sizeof(char *), 3 * sizeof(char *),
	                               5 * sizeof(char *), 7 * sizeof(char *)};
	void *p[4][4];
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < 4; i++)
			p[s][i] = calloc(1, sizes[s]);
	for (int s = 0; s < 4; s++)
		for (int i = 0; i < 4; i++)
			free(p[s][i]);
}

__attribute__((noinline)) static int table_load(void)
{
	char **table = malloc(NAMES * sizeof(*table));
	if (!table)
		return -1;
	for (int i = 0; i < NAMES; i++) {
		table[i] = strdup(names[i]);
		if (!table[i])
			goto fail;
	}
	printf("table %s..%s\n", table[0], table[NAMES - 1]);
	for (int i = 0; i < NAMES; i++)
		free(table[i]);
	free(table);
	return 0;
fail:
	/* BUG: the slots after the failed one were never written. */
	for (int i = 0; i < NAMES; i++)
		free(table[i]);
	free(table);
	return -1;
}

__attribute__((noinline)) static int list_grow(void)
{
	char **items = malloc(sizeof(*items));
	if (!items)
		return -1;
	items[0] = strdup("head");
	if (!items[0]) {
		free(items);
		return -1;
	}
	size_t used = 1, cap = 1;
	for (int i = 1; i < 6; i++) {
		if (used == cap) {
			char **bigger = realloc(items, (cap + 2) * sizeof(*items));
			if (!bigger)
				goto fail;
			items = bigger;
			cap += 2;
		}
		items[used] = malloc(16);
		if (!items[used])
			goto fail;
		snprintf(items[used], 16, "item%d", i);
		used++;
	}
	printf("list %zu items, last %s\n", used, items[used - 1]);
	for (size_t i = 0; i < used; i++)
		free(items[i]);
	free(items);
	return 0;
fail:
	/* BUG: frees every slot up to the capacity; those past the failed
	 * one are what the realloc added, never written. */
	for (size_t i = 0; i < cap; i++)
		if (i != used)
			free(items[i]);
	free(items);
	return -1;
}

int main(void)
{
	zero_recycled();
	if (table_load() != 0 || list_grow() != 0) {
		fprintf(stderr, "uninitprog: out of memory\n");
		return 1;
	}
	return 0;
}
