/*
 * ipcache.h - ipcache.c: a lock-free cache keyed by raw addresses.
 */
#ifndef GFP_IPCACHE_H
#define GFP_IPCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* A map from keys of raw addresses to non-zero values, for values that are
 * costly to compute once per call site (site ids, rule masks). Its table
 * starts at one page and doubles at half full, up to GFP_IPCACHE_MAX
 * entries: a short run touches a page or two, not half a MiB of hashed
 * slots (a page fault each, which cost a short program more than its own
 * work). Zero-initialised is empty. */
#define GFP_IPCACHE_MIN   256
#define GFP_IPCACHE_MAX   32768
#define GFP_IPCACHE_PROBE 16
struct gfp_ipcache_entry {
	uint64_t key;   /* atomic; 0 = empty */
	uint64_t value; /* atomic */
};
struct gfp_iptable; /* ipcache.c */
struct gfp_ipcache {
	struct gfp_iptable *table; /* atomic; NULL until the first put */
	size_t used;               /* under the put lock */
};
/* How many entries the current table has (for tests and reports). */
size_t ipcache_capacity(struct gfp_ipcache *c);
uint64_t ipcache_get(struct gfp_ipcache *c, uint64_t key); /* 0: absent */
/* false when the key's neighbourhood is full (the value is then not kept) */
bool ipcache_put(struct gfp_ipcache *c, uint64_t key, uint64_t value);
/* The cached value, or compute(arg) (under the guard, never 0) kept for next time. */
uint64_t ipcache_lookup(struct gfp_ipcache *c, uint64_t key, uint64_t (*compute)(const void *arg),
                        const void *arg);
void ipcache_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_IPCACHE_H */
