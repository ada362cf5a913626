/*
 * pool.c - the memory behind reserve.prefault: mapped, touched pages that a
 * jemalloc arena of their own allocates from through extent hooks.
 *
 * Accounting cannot help when jemalloc itself cannot map memory (ulimit -v,
 * overcommit refused): the bytes must exist before the pressure does. So a
 * prefaulted reservation maps its pages up front (MAP_POPULATE) and hands
 * them to an arena created with our hooks; the reserving thread allocates
 * there (MALLOCX_ARENA) when the ordinary arenas fail. Blocks from the pool
 * are ordinary jemalloc blocks: any thread frees them with free().
 *
 * The hooks never give pages back while the reservation is held: dalloc,
 * decommit and purging are refused, so what jemalloc frees inside the arena
 * stays touched and is reused by the next request. When the reservation
 * ends, the part of the regions jemalloc never took is unmapped and the
 * arena is purged (now allowed: MADV_DONTNEED); blocks still live stay
 * valid. The arena is kept for the next prefaulted reservation: jemalloc
 * arenas cannot be destroyed while a block of theirs may still be live.
 *
 * The arena's own metadata comes from the pool too (jemalloc allocates an
 * arena's base through its hooks, in 2 MiB blocks, and grows by 2 MiB), so
 * a region maps up to 4 MiB more than it reserves; only the reserved bytes
 * are touched up front.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include <jemalloc/jemalloc.h>

#include "policy.h"
#include "pool.h"
#include "sys.h"
#include "thread.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define HUGE_SZ     ((size_t)2 << 20) /* jemalloc's HUGEPAGE: base blocks, first growth */
#define MAX_POOLS   64
#define MAX_REGIONS 8

struct region {
	char *base, *bump, *end;
};

struct gfp_pool {
	unsigned arena;
	bool created, in_use, released;
	int nregions;
	struct region region[MAX_REGIONS];
};

static struct gfp_pool pools[MAX_POOLS];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
/* The pool whose arena this thread is creating: its hooks run before the
 * arena's index is known. */
static __thread struct gfp_pool *creating __attribute__((tls_model("initial-exec")));

static size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Under pool_lock. */
static struct gfp_pool *pool_of(unsigned ind)
{
	for (int i = 0; i < MAX_POOLS; i++)
		if (pools[i].created && pools[i].arena == ind)
			return &pools[i];
	return creating;
}

static void *hook_alloc(extent_hooks_t *h, void *new_addr, size_t size, size_t align, bool *zero,
                        bool *commit, unsigned ind)
{
	(void)h;
	if (new_addr != NULL)
		return NULL; /* growing in place: the regions are carved, not extended */
	void *ret = NULL;
	gfp_lock(&pool_lock);
	struct gfp_pool *p = pool_of(ind);
	for (int i = 0; p && !p->released && i < p->nregions && !ret; i++) {
		struct region *r = &p->region[i];
		char *a = (char *)round_up((uintptr_t)r->bump, align);
		if (a <= r->end && (size_t)(r->end - a) >= size) {
			r->bump = a + size;
			ret = a;
		}
	}
	gfp_unlock(&pool_lock);
	if (ret) {
		*zero = true; /* carved once, never reused: still the zero pages mapped */
		*commit = true;
	}
	return ret;
}

/* Refused: the extent stays with jemalloc, mapped, for the arena to reuse. */
static bool hook_dalloc(extent_hooks_t *h, void *addr, size_t size, bool committed, unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)committed, (void)ind;
	return true;
}

static void hook_destroy(extent_hooks_t *h, void *addr, size_t size, bool committed, unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)committed, (void)ind;
}

static bool hook_commit(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len,
                        unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)off, (void)len, (void)ind;
	return false; /* always committed */
}

static bool hook_decommit(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len,
                          unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)off, (void)len, (void)ind;
	return true;
}

/* Pages go back only once the reservation has ended. */
static bool hook_purge(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len,
                       unsigned ind)
{
	(void)h, (void)size;
	gfp_lock(&pool_lock);
	struct gfp_pool *p = pool_of(ind);
	bool keep = p && !p->released;
	gfp_unlock(&pool_lock);
	if (keep)
		return true;
	/* Runs inside jemalloc's free, which keeps errno: jemalloc's own
	 * madvise keeps it there (preload/oscalls.c), this one is the shim's. */
	int saved = errno;
	bool failed = sys_madvise((char *)addr + off, len, MADV_DONTNEED) != 0;
	errno = saved;
	return failed;
}

static bool hook_split(extent_hooks_t *h, void *addr, size_t size, size_t a, size_t b, bool c,
                       unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)a, (void)b, (void)c, (void)ind;
	return false;
}

static bool hook_merge(extent_hooks_t *h, void *a, size_t asz, void *b, size_t bsz, bool c,
                       unsigned ind)
{
	(void)h, (void)a, (void)asz, (void)b, (void)bsz, (void)c, (void)ind;
	return false;
}

static extent_hooks_t hooks = {
    .alloc = hook_alloc,
    .dalloc = hook_dalloc,
    .destroy = hook_destroy,
    .commit = hook_commit,
    .decommit = hook_decommit,
    .purge_lazy = NULL,
    .purge_forced = hook_purge,
    .split = hook_split,
    .merge = hook_merge,
};

/* Maps `len` bytes aligned to HUGE_SZ and touches [touch, touch + tlen):
 * the reserved bytes, where jemalloc's first extents will land. The rest
 * (the arena's metadata, growth rounding) is address space only. */
static char *map_region(size_t len, size_t touch, size_t tlen)
{
	size_t span = len + HUGE_SZ;
	char *m = sys_mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	char *a = (char *)round_up((uintptr_t)m, HUGE_SZ);
	if (a > m)
		sys_munmap(m, (size_t)(a - m));
	if (a + len < m + span)
		sys_munmap(a + len, (size_t)(m + span - (a + len)));
	/* MAP_POPULATE would do it too, but fails silently; a page the kernel
	 * cannot give must show now, as the reservation's failure. */
	if (sys_madvise(a + touch, tlen, MADV_POPULATE_WRITE) != 0) {
		if (errno != EINVAL) {
			sys_munmap(a, len);
			return NULL;
		}
		for (size_t off = 0; off < tlen; off += 4096) /* kernels before 5.14 */
			((volatile char *)a)[touch + off] = 0;
	}
	return a;
}

/* A spare arena first: arenas cannot be destroyed, only reused. */
static struct gfp_pool *pool_get(void)
{
	struct gfp_pool *p = NULL;
	gfp_lock(&pool_lock);
	for (int i = 0; i < MAX_POOLS; i++) {
		if (pools[i].in_use)
			continue;
		if (pools[i].created) {
			p = &pools[i];
			break;
		}
		if (!p)
			p = &pools[i];
	}
	if (p) {
		p->in_use = true;
		p->released = false;
		p->nregions = 0;
	}
	gfp_unlock(&pool_lock);
	return p;
}

static int add_region(struct gfp_pool *p, size_t len, size_t touch, size_t tlen)
{
	if (p->nregions == MAX_REGIONS)
		return -1;
	char *a = map_region(len, touch, tlen);
	if (!a)
		return -1;
	gfp_lock(&pool_lock);
	p->region[p->nregions++] = (struct region){a, a, a + len};
	gfp_unlock(&pool_lock);
	return 0;
}

static int create_arena(struct gfp_pool *p)
{
	unsigned ind;
	size_t sz = sizeof(ind);
	extent_hooks_t *hp = &hooks;
	creating = p;
	int err = mallctl("arenas.create", &ind, &sz, &hp, sizeof(hp));
	creating = NULL;
	if (err)
		return -1;
	/* Grow by 2 MiB at a time, not by jemalloc's doubling steps. */
	char name[64];
	size_t limit = HUGE_SZ;
	gfp_snprintf(name, sizeof(name), "arena.%u.retain_grow_limit", ind);
	mallctl(name, NULL, NULL, &limit, sizeof(limit));
	gfp_lock(&pool_lock);
	p->arena = ind;
	p->created = true;
	gfp_unlock(&pool_lock);
	return 0;
}

int pool_add(struct gfp_pool **pp, size_t bytes)
{
	struct gfp_pool *p = *pp;
	bool fresh = p == NULL;
	gfp_tls.guard++;
	if (fresh && !(p = pool_get())) {
		gfp_tls.guard--;
		return -1;
	}
	/* Room for the arena's metadata the first time, and for growth. */
	size_t meta = p->created ? 0 : HUGE_SZ;
	size_t len = round_up(bytes, HUGE_SZ) + HUGE_SZ + meta;
	int err = add_region(p, len, meta, round_up(bytes, 4096));
	if (!err && !p->created)
		err = create_arena(p);
	if (err && fresh) {
		pool_release(&p);
	} else if (!err) {
		*pp = p;
	}
	gfp_tls.guard--;
	return err;
}

/* Requests served from a pool (the report's pool_serves). */
static uint64_t served;

void *pool_alloc(struct gfp_pool *p, struct gfp_req *req)
{
	int fl = req->mallocx_flags | MALLOCX_ARENA(p->arena) | MALLOCX_TCACHE_NONE;
	void *r = req->old ? rallocx(req->old, req->size, fl) : mallocx(req->size, fl);
	if (r)
		__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
	return r;
}

uint64_t pool_serves(void)
{
	return __atomic_load_n(&served, __ATOMIC_RELAXED);
}

void pool_release(struct gfp_pool **pp)
{
	struct gfp_pool *p = *pp;
	*pp = NULL;
	if (!p)
		return;
	gfp_lock(&pool_lock);
	p->released = true;
	gfp_unlock(&pool_lock);
	/* What jemalloc never took goes back at once... */
	for (int i = 0; i < p->nregions; i++) {
		struct region *r = &p->region[i];
		char *from = (char *)round_up((uintptr_t)r->bump, 4096);
		if (from < r->end)
			sys_munmap(from, (size_t)(r->end - from));
		r->end = from;
	}
	/* ...and what it holds unused, by a purge the hooks now allow. */
	if (p->created) {
		char name[64];
		gfp_snprintf(name, sizeof(name), "arena.%u.purge", p->arena);
		mallctl(name, NULL, NULL, NULL, 0);
	}
	gfp_lock(&pool_lock);
	p->nregions = 0;
	p->in_use = false;
	gfp_unlock(&pool_lock);
}

void pool_atfork_child(void)
{
	pthread_mutex_init(&pool_lock, NULL);
}
