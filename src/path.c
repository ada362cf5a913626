/*
 * path.c - call-path ids: the hash of a call's first site.depth frames
 * outside the shim, named by module and offset so that an id is the same
 * across runs, ASLR and machines with the same binaries. libc's frames stay
 * in the path: strdup called from two places is two sites.
 *
 * Resolving frames to module+offset takes the loader's lock (dladdr), so ids
 * are cached by the raw return addresses, which are stable within a process
 * (ipcache.c).
 */
#include <stdbool.h>
#include <stdint.h>

#include "meaning.h"
#include "thread.h"
#include "site.h"
#include "ipcache.h"
#include "path.h"

/* FNV-1a over "module+offset;" of each frame. */
static uint64_t hash_frames(const uintptr_t *ips, int n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	gfp_tls.guard++;
	for (int i = 0; i < n; i++) {
		uintptr_t off = ips[i];
		const char *mod = site_module(ips[i], &off);
		if (!mod)
			mod = "?";
		for (const char *c = mod; *c; c++)
			h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
		for (int b = 0; b < 8; b++)
			h = (h ^ ((off >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
	}
	gfp_tls.guard--;
	return h;
}

static struct gfp_ipcache ids;

struct frames {
	const uintptr_t *ips;
	int n;
};

/* The top bits of a path id: the low bits of its innermost frame's return
 * address. A module is mapped at a page boundary, so they are its offset's
 * too, the same in every run, whatever ASLR chose. */
#define ID_TOP_SHIFT 52
#define ID_TOP_MASK  ((uint64_t)0xfff)

static uint64_t compute_id(const void *arg)
{
	const struct frames *f = arg;
	uint64_t id = hash_frames(f->ips, f->n) & ((UINT64_C(1) << ID_TOP_SHIFT) - 1);
	if (f->n)
		id |= ((uint64_t)f->ips[0] & ID_TOP_MASK) << ID_TOP_SHIFT;
	return id | (id == 0); /* 0 means absent */
}

/* Whether a call whose entry point returns to `caller` may have path `id`,
 * decided without unwinding: the path's innermost frame is the entry
 * point's return address, unless that lies in the shim (a call the shim
 * makes for itself) or is unknown (0). A run that fails one site rules out
 * most calls here. */
bool path_may_be(uintptr_t caller, uint64_t id)
{
	if (!caller || site_in_shim(caller))
		return true;
	return ((uint64_t)caller & ID_TOP_MASK) == (id >> ID_TOP_SHIFT);
}

uint64_t path_id(const uintptr_t *ips, int n)
{
	struct frames f = {ips, n};
	return ipcache_lookup(&ids, site_key(ips, n), compute_id, &f);
}

/* Calls whose path was unwound, for the report: one relaxed add beside an
 * unwind that costs a hundred times more. */
static uint64_t unwinds; /* atomic */

uint64_t path_unwinds(void)
{
	return __atomic_load_n(&unwinds, __ATOMIC_RELAXED);
}

uint64_t path_of_caller(void)
{
	__atomic_add_fetch(&unwinds, 1, __ATOMIC_RELAXED);
	uintptr_t ips[32];
	int n = site_ips(ips, (int)gfp_policy.site_depth);
	return path_id(ips, n);
}
