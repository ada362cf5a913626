/*
 * profile.c - per-call-site statistics (stats=sites, and paths), like the
 * kernel's allocation profiling (/proc/allocinfo, its
 * code tags; doc/design.md, "The kernel behaviours it models").
 *
 * What it counts by is the caller: the return address of the allocation
 * entry point, or, when that lies in libc (strdup, getline, fopen), the
 * first frame outside libc (site.c: site_outside_libc). The kernel's codetag
 * is a call site in the source, and so is this; the report calls a caller's
 * row a "site". Callers get a small index, the caller index, the first time
 * they are seen (a lock-free cache keyed by the address, ipcache.c), and each
 * thread counts into its own array, indexed by caller, that only it writes:
 * no atomic read-modify-write on a call. (Never a path id: that is path.c's
 * hash of several frames, which injection and stats=paths use.)
 *
 * Live bytes need the caller and the usable size of the block being freed.
 * Like the kernel's slab object extensions, a shadow map keeps a 16-bit
 * entry for every 8-byte granule (the layout: profile.h). The entry of the
 * granule that starts a block holds its caller index; a block of more than 8 bytes
 * starts on a 16-byte boundary and has its own second granule, whose entry
 * holds its usable size (in granules), so that neither end of a block asks
 * jemalloc for its size (sallocx costs more than malloc itself). Such a
 * block is live exactly while its entries are in the map, so its free only
 * clears them, and a report finds its live bytes by walking the map (its
 * cost grows with the heap, by a 4-byte load per 16 bytes of it, and is paid
 * per report, not per call). A larger block's entry holds only its caller; its
 * live bytes are counted apart, and the thread that frees it takes them off
 * that caller in its own array, so the sum over threads is exact.
 * A directory of 2 MiB chunks (open addressing, filled under a lock once
 * per chunk) points to leaves of 256K entries, mapped on first use; each
 * thread keeps the leaves it used last (gfp_tls.caller), where the profiled
 * routes find them in line.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include <jemalloc/jemalloc.h>

#include "policy.h"
#include "log.h"
#include "modules.h"
#include "site.h"
#include "ipcache.h"
#include "thread.h"
#include "profile.h"
#include "profile_externs.h"
#include "sys.h"

#define MAX_CALLERS PROFILE_MAX_CALLERS
#define CHUNK_SHIFT GFP_CHUNK_SHIFT
#define GRANULE     GFP_GRANULE
#define LEAF_LEN    PROFILE_LEAF_LEN
#define DIR_LEN     PROFILE_DIR_LEN

/* The map's rule: an entry is nonzero only while the counted block it
 * describes is live (every free clears, whatever path it takes), so an
 * uncounted block finds zeros. A size entry has GFP_SHADOW_SIZE, which no
 * caller entry has, so that it can never be read as a block's. */
_Static_assert(MAX_CALLERS - 1 <= GFP_SHADOW_MASK, "a caller index must fit beside the flags");
_Static_assert(GFP_SIZE_TABLE_MAX >> GRANULE <= GFP_SHADOW_MASK, "a size entry must hold it");
_Static_assert(GFP_SIZE_MID_MAX >> GRANULE <= GFP_SHADOW_MASK, "a size entry must hold it");
_Static_assert(MAX_CALLERS <= 1u << (64 - GFP_RECENT_IDX_SHIFT), "a recent slot must hold it");


static uintptr_t caller_addr[MAX_CALLERS]; /* the address that names each caller */
/* Where each caller lies, taken when it is first seen: a library unloaded
 * since (dlclose) is still named in the report (mod: modules.c's index, 0:
 * unknown). Under lock. */
static struct {
	uint16_t mod;
	uintptr_t off;
} caller_where[MAX_CALLERS];
unsigned profile_ncallers; /* atomic */
static struct gfp_ipcache index_of;
pthread_mutex_t profile_lock = PTHREAD_MUTEX_INITIALIZER;
struct gfp_caller_counts profile_dead[MAX_CALLERS];
struct profile_orphan profile_orphan[MAX_CALLERS];
static bool warned_full;
struct gfp_route_map gfp_route_map; /* .size[0]: malloc(0)'s, a byte's */
struct profile_dir_slot profile_dir[PROFILE_DIR_LEN];

/* ------------------------------------------------------------------------
 * Callers
 * ---------------------------------------------------------------------- */

static unsigned caller_index_slow(const struct gfp_req *req);

/* The thread's last caller (gfp_tls.caller) is the one loops allocate from;
 * the profiled routes count there without asking. */
static unsigned caller_index(const struct gfp_req *req)
{
	struct gfp_caller_cache *sc = &gfp_tls.caller;
	unsigned slot = gfp_last_slot(req->entry);
	if (req->caller && req->caller == sc->last[slot].caller)
		return sc->last[slot].idx;
	unsigned idx = caller_index_slow(req);
	/* A caller inside libc (strdup) is many callers: only the return
	 * address names the caller by itself may be remembered. */
	if (idx && sc->counts && req->caller && req->caller >> GFP_RECENT_IDX_SHIFT == 0 &&
	    !site_in_libc(req->caller) && !site_in_shim(req->caller)) {
		__atomic_store_n(&sc->recent[gfp_recent_slot(req->caller)],
		                 req->caller | (uint64_t)idx << GFP_RECENT_IDX_SHIFT,
		                 __ATOMIC_RELAXED);
		gfp_caller_make_last(slot, req->caller, idx);
	}
	return idx;
}

static unsigned caller_index_slow(const struct gfp_req *req)
{
	uintptr_t addr = site_outside_libc(req->caller);
	uint64_t key = site_key(&addr, 1);
	unsigned idx = (unsigned)ipcache_get(&index_of, key);
	if (idx)
		return idx;
	/* Its module now, while it is loaded (a report may come after a
	 * dlclose); outside the lock, as little as possible runs under it. */
	uintptr_t off = addr;
	gfp_tls.guard++;
	unsigned mod = site_module(addr, &off) ? modules_of(addr) : 0;
	gfp_tls.guard--;
	gfp_lock(&profile_lock);
	idx = (unsigned)ipcache_get(&index_of, key);
	/* A caller the cache could not keep is looked for in the table itself,
	 * so that it never gets a second index. */
	for (unsigned i = 1; !idx && i <= profile_ncallers; i++)
		if (caller_addr[i] == addr)
			idx = i;
	if (!idx && profile_ncallers + 1 < MAX_CALLERS) {
		idx = profile_ncallers + 1;
		caller_addr[idx] = addr;
		caller_where[idx].mod = (uint16_t)mod;
		caller_where[idx].off = off;
		__atomic_store_n(&profile_ncallers, idx, __ATOMIC_RELEASE);
		ipcache_put(&index_of, key, idx);
	}
	bool full = !idx && !warned_full;
	warned_full |= full;
	gfp_unlock(&profile_lock);
	if (full)
		gfp_log(GFP_LOG_WARNING,
		        "stats=sites: more than %d call sites; the rest are not "
		        "counted per site",
		        MAX_CALLERS - 1);
	return idx;
}

/* ------------------------------------------------------------------------
 * The shadow map
 * ---------------------------------------------------------------------- */

static uint16_t *leaf_lookup(uintptr_t addr, bool create);

/* Gives leaf, the leaf of the chunk at addr, the routes' entry when it is
 * free. Never the first chunk: NULL would be in it. */
static void route_dir_put(uintptr_t addr, uint16_t *leaf)
{
	uintptr_t c = addr >> CHUNK_SHIFT;
	size_t i = c & ((1u << GFP_ROUTE_BITS) - 1);
	if (!c || __atomic_load_n(&gfp_route_map.chunk[i], __ATOMIC_RELAXED))
		return;
	gfp_lock(&profile_lock);
	if (!gfp_route_map.chunk[i]) {
		gfp_route_map.words[i] = (uintptr_t)leaf - ((c << CHUNK_SHIFT) >> 2);
		__atomic_store_n(&gfp_route_map.chunk[i], c, __ATOMIC_RELEASE);
	}
	gfp_unlock(&profile_lock);
}

static __attribute__((noinline)) uint16_t *leaf_of_slow(uintptr_t addr, bool create)
{
	uint16_t *leaf = leaf_lookup(addr, create);
	if (leaf)
		route_dir_put(addr, leaf);
	return leaf;
}

/* The leaf of addr's chunk from the routes' directory, or NULL. */
static inline uint16_t *leaf_cached(uintptr_t addr)
{
	uint32_t *w;
	if (!gfp_route_word((const void *)addr, &w))
		return NULL;
	return (uint16_t *)((uintptr_t)w - (((addr & (GFP_CHUNK_SIZE - 1)) >> (GRANULE + 1)) << 2));
}

static inline uint16_t *entry_of(uint16_t *leaf, uintptr_t addr)
{
	return &leaf[(addr & ((1u << CHUNK_SHIFT) - 1)) >> GRANULE];
}

static inline struct gfp_caller_counts *counts(void);

/* The leaf of the chunk of addr; NULL when the map has no room for it
 * (`create` false: when nothing was ever written there). */
static inline uint16_t *leaf_at(uintptr_t addr, bool create)
{
	uint16_t *leaf = leaf_cached(addr);
	return leaf ? leaf : leaf_of_slow(addr, create);
}

/* The entry of the granule at addr (NULL: as leaf_at). */
static inline uint16_t *entry_at(uintptr_t addr, bool create)
{
	uint16_t *leaf = leaf_at(addr, create);
	return leaf ? entry_of(leaf, addr) : NULL;
}

/* entry_at without taking a lock or mapping: NULL when that would be needed. */
static inline uint16_t *entry_quick(uintptr_t addr)
{
	uint16_t *leaf = leaf_cached(addr);
	return leaf ? entry_of(leaf, addr) : NULL;
}

static uint16_t *leaf_lookup(uintptr_t addr, bool create)
{
	uintptr_t chunk = (addr >> CHUNK_SHIFT) + 1;
	for (unsigned i = 0; i < 64; i++) {
		unsigned slot = (unsigned)((chunk * 0x9e3779b97f4a7c15ULL) >> 48) + i;
		slot %= DIR_LEN;
		uintptr_t c = __atomic_load_n(&profile_dir[slot].chunk, __ATOMIC_ACQUIRE);
		if (c == chunk)
			return profile_dir[slot].leaf;
		if (c != 0)
			continue;
		if (!create)
			return NULL;
		uint16_t *leaf = NULL;
		gfp_lock(&profile_lock);
		c = __atomic_load_n(&profile_dir[slot].chunk, __ATOMIC_RELAXED);
		if (c == 0) {
			void *m =
			    sys_mmap(NULL, LEAF_LEN * sizeof(uint16_t), PROT_READ | PROT_WRITE,
			             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (m != MAP_FAILED) {
				profile_dir[slot].leaf = m;
				__atomic_store_n(&profile_dir[slot].chunk, chunk, __ATOMIC_RELEASE);
				leaf = m;
			}
		} else if (c == chunk) {
			leaf = profile_dir[slot].leaf;
		}
		gfp_unlock(&profile_lock);
		if (leaf || c == 0)
			return leaf;
	}
	return NULL;
}

/* The usable size in granules of malloc or calloc of `size` bytes (`flags`
 * their mallocx flags); 0 when the table does not cover the request. */
static inline unsigned usable_granules(size_t size, int flags)
{
	if (unlikely((flags & ~MALLOCX_ZERO) || size > GFP_SIZE_TABLE_MAX))
		return 0;
	return (gfp_route_map.size[size] >> 16) & GFP_SHADOW_MASK;
}

/* The usable size of a block malloc or calloc just returned. */
static inline size_t usable_of(const void *p, size_t size, int flags)
{
	unsigned g = usable_granules(size, flags);
	return g ? (size_t)g << GRANULE : sallocx(p, 0);
}

/* Whether a counted block's live bytes are counted apart, in its caller's
 * live counters: when its entries do not give its size (over 128 KiB: the
 * free asks jemalloc). Every other block is live exactly while its entries
 * are in the map, and the report counts them there (walk_live). */
static inline bool shadow_apart(uintptr_t addr, size_t usable)
{
	return usable != 1u << GRANULE &&
	       ((addr & (1u << GRANULE)) || usable >> GRANULE > GFP_SHADOW_MASK);
}

static inline void entry_put(uint16_t *e, unsigned v)
{
	__atomic_store_n(e, (uint16_t)v, __ATOMIC_RELAXED);
}

/* Writes a block's entries: its caller index (0: not counted) and usable size.
 * (Relaxed atomics, as a report may walk the map meanwhile.) */
static inline void shadow_write(uint16_t *e, uintptr_t addr, unsigned idx, size_t usable)
{
	if (!idx) {
		entry_put(e, 0); /* not counted: the next granule may be another block's */
	} else if (usable == 1u << GRANULE) {
		entry_put(e, idx | GFP_SHADOW_TINY);
	} else if (!shadow_apart(addr, usable)) {
		entry_put(e, idx);
		entry_put(e + 1, (unsigned)(usable >> GRANULE) | GFP_SHADOW_SIZE);
	} else {
		entry_put(e, idx);
		/* Over 128 KiB at an even granule: the next granule is its own,
		 * and no stale size entry there may describe it to the walk. */
		if (!(addr & (1u << GRANULE)))
			entry_put(e + 1, 0);
	}
}

/* Writes a block's entries; true when its live bytes are to be counted
 * apart (shadow_apart). A block the map could not hold is not counted
 * live. */
static bool shadow_set(const void *p, unsigned idx, size_t usable)
{
	uintptr_t a = (uintptr_t)p;
	uint16_t *e = entry_at(a, idx != 0);
	if (e)
		shadow_write(e, a, idx, usable);
	return e && idx && shadow_apart(a, usable);
}

/* The caller index of the block at p, and its usable size, cleared: the block
 * is going away. 0 when it was not counted. */
static inline unsigned shadow_take(const void *p, size_t *usable)
{
	uintptr_t a = (uintptr_t)p;
	uint16_t *e = entry_at(a, false);
	if (!e)
		return 0;
	unsigned v = __atomic_load_n(e, __ATOMIC_RELAXED), next;
	if (!(v & GFP_SHADOW_MASK) || (v & GFP_SHADOW_SIZE))
		return 0;
	entry_put(e, 0);
	if (v & GFP_SHADOW_TINY) {
		*usable = 1u << GRANULE;
	} else if (!(a & (1u << GRANULE)) &&
	           ((next = __atomic_load_n(e + 1, __ATOMIC_RELAXED)) & GFP_SHADOW_SIZE)) {
		*usable = (size_t)(next & GFP_SHADOW_MASK) << GRANULE;
		entry_put(e + 1, 0);
	} else {
		*usable = sallocx(p, 0);
	}
	return v & GFP_SHADOW_MASK;
}

/* ------------------------------------------------------------------------
 * Counting (each thread in its own array)
 * ---------------------------------------------------------------------- */

static __attribute__((noinline)) struct gfp_caller_counts *counts_create(void)
{
	struct gfp_thread *t = gfp_tls.thread;
	if (!t)
		return NULL;
	void *m =
	    sys_mmap(NULL, MAX_CALLERS * sizeof(struct gfp_caller_counts), PROT_READ | PROT_WRITE,
	             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	__atomic_store_n(&t->callers, m, __ATOMIC_RELEASE);
	return m;
}

/* The calling thread's counts, NULL if it has none and can get none. */
static inline struct gfp_caller_counts *counts(void)
{
	struct gfp_thread *t = gfp_tls.thread;
	if (likely(gfp_tls.caller.counts))
		return gfp_tls.caller.counts;
	if (!t)
		return NULL;
	struct gfp_caller_counts *c = t->callers ? t->callers : counts_create();
	if (!gfp_tls.exiting)
		gfp_tls.caller.counts = c; /* the routes', until the thread exits */
	return c;
}

/* Before a realloc: the old block's size and caller index, taken out of the map
 * while the block is still ours (once rallocx has moved it, another thread
 * may already have its address). */
void profile_before_realloc(struct gfp_req *req)
{
	req->old_usable = 0;
	req->old_caller_idx = shadow_take(req->old, &req->old_usable);
}

static inline void count_live(struct gfp_caller_counts *s, size_t usable, int64_t calls)
{
	gfp_add(&s->live_bytes, calls * (int64_t)usable);
	gfp_add(&s->live_calls, calls);
}

/* The live bytes of each caller's blocks counted apart (over 128 KiB),
 * across threads, and the most they reached: a large block is rare and
 * costly enough to pay one atomic for an exact peak. (Small blocks are
 * counted in the map, known only by walking it: their share of a peak is
 * seen by the reports' full counts.) */
static int64_t apart_live[MAX_CALLERS], apart_peak[MAX_CALLERS]; /* atomic */

static void apart_track(unsigned idx, int64_t delta)
{
	int64_t now = __atomic_add_fetch(&apart_live[idx], delta, __ATOMIC_RELAXED);
	int64_t peak = __atomic_load_n(&apart_peak[idx], __ATOMIC_RELAXED);
	while (delta > 0 && now > peak &&
	       !__atomic_compare_exchange_n(&apart_peak[idx], &peak, now, true, __ATOMIC_RELAXED,
	                                    __ATOMIC_RELAXED))
		;
}

static inline void count_apart(struct gfp_caller_counts *s, unsigned idx, size_t usable,
                               int64_t calls)
{
	count_live(s, usable, calls);
	apart_track(idx, calls * (int64_t)usable);
}

static __attribute__((noinline)) void uncount_orphan(unsigned idx, size_t usable)
{
	__atomic_sub_fetch(&profile_orphan[idx].bytes, (int64_t)usable, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&profile_orphan[idx].calls, 1, __ATOMIC_RELAXED);
}

/* A counted block is gone: its bytes leave its caller's counts. */
static inline void uncount_live(unsigned idx, size_t usable)
{
	apart_track(idx, -(int64_t)usable);
	struct gfp_caller_counts *c = counts();
	if (likely(c))
		count_live(&c[idx], usable, -1);
	else
		uncount_orphan(idx, usable);
}

/* After a realloc, p its answer: the old block, which profile_before_realloc
 * took out, goes back into the map if the realloc failed; else it is gone, or
 * grown in place into p. */
void profile_after_realloc(const struct gfp_req *req, void *p)
{
	if (!req->old_caller_idx)
		return;
	if (!p)
		shadow_set(req->old, req->old_caller_idx, req->old_usable);
	else if (shadow_apart((uintptr_t)req->old, req->old_usable))
		uncount_live(req->old_caller_idx, req->old_usable);
}

/* A request ended: p is the block, or NULL. */
void profile_count(struct gfp_req *req, void *p)
{
	if (req->old)
		profile_after_realloc(req, p);
	struct gfp_caller_counts *c = counts();
	if (!c)
		return;
	gfp_tls.guard++;
	unsigned idx = caller_index(req);
	if (idx) {
		struct gfp_caller_counts *s = &c[idx];
		gfp_add((int64_t *)&s->calls, 1);
		if (p) {
			gfp_add((int64_t *)&s->bytes, (int64_t)req->size);
			size_t usable =
			    req->old ? sallocx(p, 0) : usable_of(p, req->size, req->mallocx_flags);
			if (shadow_set(p, idx, usable))
				count_apart(s, idx, usable, 1);
		} else {
			gfp_add((int64_t *)&s->failures, 1);
			if (req->why == GFP_WHY_INJECT)
				gfp_add((int64_t *)&s->injections, 1);
		}
	}
	if (p && !idx)
		shadow_set(p, 0, 0); /* an uncounted block: no stale caller at its address */
	gfp_tls.guard--;
}

/* profile_count's common case, for a block `s` asked for and got: the
 * thread's last caller, and a block in the chunk it used last. false when the
 * request needs the general way. */
bool profile_count_quick(void *p, const struct gfp_stash *s)
{
	uintptr_t a = (uintptr_t)p;
	const struct gfp_caller_last *l = &gfp_tls.caller.last[gfp_last_slot(s->entry)];
	uint16_t *e = entry_quick(a);
	if (unlikely(!e || !s->caller || s->caller != l->caller))
		return false;
	/* Only a usable size the table knows: calling jemalloc here would cost
	 * every call a stack frame. */
	unsigned granules = usable_granules(s->size, s->mallocx_flags);
	if (unlikely(!granules))
		return false;
	size_t usable = (size_t)granules << GRANULE;
	struct gfp_caller_counts *c = l->c;
	shadow_write(e, a, l->idx, usable);
	gfp_add((int64_t *)&c->calls, 1);
	gfp_add((int64_t *)&c->bytes, (int64_t)s->size);
	if (shadow_apart(a, usable))
		count_apart(c, l->idx, usable, 1);
	return true;
}

/* ------------------------------------------------------------------------
 * Mappings (mapped.c)
 * ---------------------------------------------------------------------- */

struct gfp_caller_counts *profile_counts(void)
{
	return counts();
}

unsigned profile_caller_index(const struct gfp_req *req)
{
	return caller_index(req);
}

void profile_apart_add(unsigned idx, int64_t delta)
{
	apart_track(idx, delta);
}

/* The profiled routes' rare ends (profile.h). */
bool profile_route_rechunk(void *p)
{
	uint32_t *w;
	return counts() && leaf_at((uintptr_t)p, true) && gfp_route_word(p, &w);
}

bool profile_route_free_other(void *p)
{
	uintptr_t a = (uintptr_t)p;
	if ((a & 15) || !counts())
		return false;
	uint16_t *leaf = leaf_of_slow(a, false);
	if (!leaf)
		return false;
	uint32_t *w = (uint32_t *)entry_of(leaf, a), v = __atomic_load_n(w, __ATOMIC_RELAXED);
	if ((int32_t)v >= 0)
		return false;
	__atomic_store_n(w, 0, __ATOMIC_RELAXED);
	gfp_count(&gfp_tls.stats[GFP_E_free].calls, 1);
	return true;
}

/* The slow path's share: rounds beyond the first, and how long it took. */
void profile_slow(struct gfp_req *req, unsigned rounds, uint64_t ns)
{
	struct gfp_caller_counts *c = counts();
	if (!c)
		return;
	gfp_tls.guard++;
	unsigned idx = caller_index(req);
	gfp_tls.guard--;
	if (!idx)
		return;
	if (rounds > 1)
		gfp_add((int64_t *)&c[idx].retries, rounds - 1);
	if (ns > c[idx].max_stall_ns)
		__atomic_store_n(&c[idx].max_stall_ns, ns, __ATOMIC_RELAXED);
}

void profile_free(const void *p)
{
	size_t usable;
	unsigned idx = shadow_take(p, &usable);
	if (idx && shadow_apart((uintptr_t)p, usable))
		uncount_live(idx, usable);
}

int64_t profile_apart_peak(unsigned idx)
{
	return __atomic_load_n(&apart_peak[idx], __ATOMIC_RELAXED);
}

uintptr_t profile_caller_where(unsigned idx, unsigned *mod, uintptr_t *off)
{
	*mod = caller_where[idx].mod;
	*off = caller_where[idx].off;
	return caller_addr[idx];
}

void profile_atfork_child(void)
{
	pthread_mutex_init(&profile_lock, NULL);
}
