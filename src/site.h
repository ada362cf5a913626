/*
 * site.h - site.c: where a call comes from (a "site", the user-facing word):
 * the caller outside libc, call-path ids, the loaded objects. Inside the
 * shim a path is a call-path id and a caller a return address (README: How
 * a request flows); site_* names only this module.
 */
#ifndef GFP_SITE_H
#define GFP_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#pragma GCC visibility push(hidden)

void site_init(void);
bool site_in_ldso(uintptr_t ip);
/* An object's executable segments, as one range; 0, 0 if it has none. */
struct dl_phdr_info;
struct gfp_range site_text_of(const struct dl_phdr_info *info);
bool site_in_shim(uintptr_t ip);
bool site_in_libc(uintptr_t ip);
uintptr_t site_first_outside_libc(const uintptr_t *ips, int n);
uintptr_t site_outside_libc(uintptr_t caller);
uint64_t site_key(const uintptr_t *ips, int n);
/* The file name (no directory) of the module that holds ip - "" for the main
 * program - and ip's offset in it; NULL when no module holds it. */
const char *site_module(uintptr_t ip, uintptr_t *off);
/* The loaded object that holds ip, and its mapping's start; NULL if none. */
struct link_map *site_object(uintptr_t ip, uintptr_t *base);
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
struct gfp_iptable; /* site.c */
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
int site_ips(uintptr_t *ips, int max);
/* A path id: the hash of a call path (site.depth frames), what fail.site
 * names and records call "site"; never a profile index (profile.h). Its top
 * 12 bits are those of the innermost frame's return address. */
uint64_t path_id(const uintptr_t *ips, int n);
uint64_t path_of_caller(void);
/* false: a call whose entry point returns to `caller` (0 if unknown)
 * certainly has another path than `id` (its top bits say so). */
bool site_path_may_be(uintptr_t caller, uint64_t id);
/* How many call paths this process unwound (path_of_caller). */
uint64_t site_unwinds(void);
void site_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_SITE_H */
