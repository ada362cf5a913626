/*
 * site.h - site.c: where a call comes from (a "site", the user-facing word):
 * the caller outside libc, the loaded objects (call-path ids: path.h; the
 * cache keyed by raw addresses: ipcache.h). Inside the
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
int site_ips(uintptr_t *ips, int max);
/* Whether ip lies in an object loaded only because the shim is (one the
 * shim's library needs and the program does not): site_deps.c. */
bool site_in_shim_deps(uintptr_t ip);

#pragma GCC visibility pop

#endif /* GFP_SITE_H */
