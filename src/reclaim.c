/*
 * reclaim.c - what the slow path can free: jemalloc's dirty pages and thread
 * cache, and the program's own caches through registered shrinkers; and the
 * OOM notifiers.
 *
 * Shrinkers run with the allocation's context and only when it allows their
 * kind (an FS shrinker needs GFP_FS, an IO shrinker GFP_IO), as the kernel's
 * shrink_slab skips FS-dependent caches under GFP_NOFS. They run without any
 * shim lock held and with the thread marked as reclaiming: what they allocate
 * may use the reserves but never recurses into reclaim (PF_MEMALLOC).
 *
 * What is still reclaimable (should_reclaim_retry's zone_reclaimable_pages)
 * is estimated from what the shrinkers answered, without calling them: one
 * that freed less than it was asked on its last call gave all it had and
 * counts for nothing until it is called again; one that gave all it was
 * asked, or was never called, may hold anything. jemalloc's dirty pages do
 * not count: each round purges them.
 */
#include <pthread.h>

#include <jemalloc/jemalloc.h>

#include "policy.h"
#include "thread.h"
#include "reclaim.h"

#define MAX_SHRINKERS 64
#define MAX_NOTIFIERS 16

struct shrinker {
	gfp_shrink_fn scan;
	void *arg;
	unsigned kind;
	bool spent; /* atomic: its last call freed less than it was asked */
};

struct notifier {
	gfp_oom_fn fn;
	void *arg;
};

static struct shrinker shrinkers[MAX_SHRINKERS];
static struct notifier notifiers[MAX_NOTIFIERS];
static unsigned nr_shrinkers, nr_notifiers; /* atomic: entries are published, never removed */
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

int reclaim_shrinker_register(gfp_shrink_fn scan, void *arg, unsigned kind)
{
	if (!scan || kind > GFP_SHRINK_FS)
		return -1;
	int r = -1;
	gfp_lock(&register_lock);
	unsigned n = __atomic_load_n(&nr_shrinkers, __ATOMIC_RELAXED);
	if (n < MAX_SHRINKERS) {
		shrinkers[n] = (struct shrinker){scan, arg, kind, false};
		__atomic_store_n(&nr_shrinkers, n + 1, __ATOMIC_RELEASE);
		r = 0;
	}
	gfp_unlock(&register_lock);
	return r;
}

int reclaim_oom_notifier_register(gfp_oom_fn fn, void *arg)
{
	if (!fn)
		return -1;
	int r = -1;
	gfp_lock(&register_lock);
	unsigned n = __atomic_load_n(&nr_notifiers, __ATOMIC_RELAXED);
	if (n < MAX_NOTIFIERS) {
		notifiers[n] = (struct notifier){fn, arg};
		__atomic_store_n(&nr_notifiers, n + 1, __ATOMIC_RELEASE);
		r = 0;
	}
	gfp_unlock(&register_lock);
	return r;
}

static bool kind_allowed(unsigned kind, gfp_t ctx)
{
	switch (kind) {
	case GFP_SHRINK_FS:
		return (ctx & GFP_FS_BIT) != 0;
	case GFP_SHRINK_IO:
		return (ctx & GFP_IO_BIT) != 0;
	default:
		return true;
	}
}

static size_t resident(void)
{
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch), r = 0;
	mallctl("epoch", &epoch, &sz, &epoch, sz);
	sz = sizeof(r);
	mallctl("stats.resident", &r, &sz, NULL, 0);
	return r;
}

/* jemalloc's part: return dirty pages and this thread's cache. Returns the
 * resident bytes given back. */
static size_t reclaim_jemalloc(void)
{
	char name[64];
	gfp_snprintf(name, sizeof(name), "arena.%u.purge", (unsigned)MALLCTL_ARENAS_ALL);
	gfp_tls.guard++;
	size_t before = resident();
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	mallctl(name, NULL, NULL, NULL, 0);
	size_t after = resident();
	gfp_tls.guard--;
	return before > after ? before - after : 0;
}

size_t reclaim_run(gfp_t ctx, size_t want, bool with_jemalloc)
{
	size_t freed = with_jemalloc ? reclaim_jemalloc() : 0;
	unsigned n = __atomic_load_n(&nr_shrinkers, __ATOMIC_ACQUIRE);
	gfp_tls.in_reclaim++;
	for (unsigned i = 0; i < n; i++) {
		if (!kind_allowed(shrinkers[i].kind, ctx))
			continue;
		size_t got = shrinkers[i].scan(shrinkers[i].arg, want, ctx);
		__atomic_store_n(&shrinkers[i].spent, got < want, __ATOMIC_RELAXED);
		freed += got;
	}
	gfp_tls.in_reclaim--;
	return freed;
}

bool reclaim_may_free_more(gfp_t ctx)
{
	unsigned n = __atomic_load_n(&nr_shrinkers, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (kind_allowed(shrinkers[i].kind, ctx) &&
		    !__atomic_load_n(&shrinkers[i].spent, __ATOMIC_RELAXED))
			return true;
	return false;
}

size_t reclaim_oom_notify(void)
{
	size_t freed = 0;
	unsigned n = __atomic_load_n(&nr_notifiers, __ATOMIC_ACQUIRE);
	gfp_tls.in_reclaim++;
	for (unsigned i = 0; i < n; i++)
		freed += notifiers[i].fn(notifiers[i].arg);
	gfp_tls.in_reclaim--;
	return freed;
}

void reclaim_atfork_child(void)
{
	pthread_mutex_init(&register_lock, NULL);
}
