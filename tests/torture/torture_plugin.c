/*
 * torture_plugin.c - a library the dlopen case loads and unloads from
 * several threads at once. It allocates in its constructor and frees in its
 * destructor, has dynamic TLS (ld.so allocates each thread's block on first
 * use), and makes blocks that outlive it: the program frees them after
 * dlclose, often on another thread.
 */
#include <stdlib.h>
#include <string.h>

#include "torture.h"

#define TABLE_LEN  (24 * 1024)
#define TABLE_SEED 0x7ab1eull

static struct tt_blk *table;
static __thread unsigned char tls_buf[3000];
static __thread uint64_t tls_uses;

__attribute__((constructor)) static void plugin_init(void)
{
	table = malloc(sizeof(*table) + TABLE_LEN);
	if (table) /* else plugin_table_ok() says so */
		tt_init(table, TABLE_LEN, TABLE_SEED);
}

__attribute__((destructor)) static void plugin_fini(void)
{
	if (table && tt_diff(table->data, TABLE_LEN, TABLE_SEED) != TABLE_LEN)
		abort(); /* the heap changed the table under us */
	free(table);
	table = NULL;
}

/* 1 when the constructor's table is intact, 0 when it is damaged, -1 when
 * its allocation failed. */
__attribute__((visibility("default"))) int plugin_table_ok(void)
{
	if (!table)
		return -1;
	return table->magic == TT_MAGIC && tt_diff(table->data, TABLE_LEN, TABLE_SEED) == TABLE_LEN;
}

/* A block of len bytes of seed's stream, made here (through libc's strdup
 * too), or NULL when an allocation failed. */
__attribute__((visibility("default"))) struct tt_blk *plugin_make(size_t len, uint64_t seed)
{
	char *name = strdup("torture-plugin-block");
	if (!name)
		return NULL;
	struct tt_blk *b = malloc(sizeof(*b) + len);
	if (b)
		tt_init(b, len, seed);
	free(name);
	return b;
}

/* Uses this thread's TLS block: returns how often this thread did, and 0
 * when the block did not hold what the last use left in it. */
__attribute__((visibility("default"))) uint64_t plugin_tls(uint64_t seed)
{
	if (tls_uses && tt_diff(tls_buf, sizeof(tls_buf), tls_uses) != sizeof(tls_buf))
		return 0;
	tls_uses++;
	(void)seed;
	tt_fill(tls_buf, sizeof(tls_buf), tls_uses);
	return tls_uses;
}
