/*
 * path.h - path.c: call-path ids, the hash of a call's frames outside the
 * shim, which injection, records and stats=paths use.
 */
#ifndef GFP_PATH_H
#define GFP_PATH_H

#include <stdbool.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* A path id: the hash of a call path (site.depth frames), what fail.site
 * names and records call "site"; never a profile index (profile.h). Its top
 * 12 bits are those of the innermost frame's return address. */
uint64_t path_id(const uintptr_t *ips, int n);
uint64_t path_of_caller(void);
/* false: a call whose entry point returns to `caller` (0 if unknown)
 * certainly has another path than `id` (its top bits say so). */
bool path_may_be(uintptr_t caller, uint64_t id);
/* How many call paths this process unwound (path_of_caller). */
uint64_t path_unwinds(void);

#pragma GCC visibility pop

#endif /* GFP_PATH_H */
