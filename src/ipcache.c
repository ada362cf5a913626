/*
 * ipcache.c - a lock-free map from keys of raw addresses to values costly to
 * compute once per call site (path ids, GFP_RULES' masks, the fail.* stack
 * filter, stats=sites' caller indexes). Readers take no lock; a put takes
 * one. Its memory is mmap's, never malloc's: it runs inside malloc.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

#include "thread.h"
#include "ipcache.h"
#include "sys.h"

/* Slots are only ever filled, under the lock: the value first, then the
 * key that publishes it; readers take no lock. A table that grows is copied
 * whole before the pointer to the copy is published, and the old one is
 * never unmapped: a reader still probing it finds what it held. A full
 * neighbourhood in the largest table just means the caller computes the
 * value again next time. */
struct gfp_iptable {
	size_t mask; /* entries - 1 */
	struct gfp_ipcache_entry e[];
};

static struct gfp_ipcache_entry *slot(struct gfp_iptable *t, uint64_t key, unsigned i)
{
	return &t->e[(key + i) & t->mask];
}

uint64_t ipcache_get(struct gfp_ipcache *c, uint64_t key)
{
	struct gfp_iptable *t = __atomic_load_n(&c->table, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; t && i < GFP_IPCACHE_PROBE; i++) {
		struct gfp_ipcache_entry *e = slot(t, key, i);
		if (__atomic_load_n(&e->key, __ATOMIC_ACQUIRE) == key)
			return __atomic_load_n(&e->value, __ATOMIC_RELAXED);
	}
	return 0;
}

size_t ipcache_capacity(struct gfp_ipcache *c)
{
	struct gfp_iptable *t = __atomic_load_n(&c->table, __ATOMIC_ACQUIRE);
	return t ? t->mask + 1 : 0;
}

static pthread_mutex_t put_lock = PTHREAD_MUTEX_INITIALIZER;

/* Where key goes in t: its own slot, a free one, or NULL (all taken). */
static struct gfp_ipcache_entry *place(struct gfp_iptable *t, uint64_t key)
{
	for (unsigned i = 0; i < GFP_IPCACHE_PROBE; i++) {
		struct gfp_ipcache_entry *e = slot(t, key, i);
		uint64_t k = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
		if (k == key || k == 0)
			return e;
	}
	return NULL;
}

/* A table of twice the entries (the minimum for none) holding every entry
 * of the old one; NULL at the maximum or when no memory is left, and then
 * the old table goes on as it is. mmap, not malloc: this runs inside it. */
static struct gfp_iptable *grown(const struct gfp_iptable *old)
{
	size_t n = old ? (old->mask + 1) * 2 : GFP_IPCACHE_MIN;
	if (n > GFP_IPCACHE_MAX)
		return NULL;
	struct gfp_iptable *t =
	    sys_mmap(NULL, sizeof *t + n * sizeof t->e[0], PROT_READ | PROT_WRITE,
	             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	t->mask = n - 1;
	for (size_t i = 0; old && i <= old->mask; i++) {
		struct gfp_ipcache_entry *e = place(t, old->e[i].key);
		if (old->e[i].key && e)
			*e = old->e[i];
	}
	return t;
}

bool ipcache_put(struct gfp_ipcache *c, uint64_t key, uint64_t value)
{
	gfp_lock(&put_lock);
	struct gfp_iptable *t = c->table;
	struct gfp_ipcache_entry *e = t ? place(t, key) : NULL;
	bool fresh = !e || e->key != key;
	if (fresh && (!e || 2 * (c->used + 1) > t->mask + 1)) {
		struct gfp_iptable *bigger = grown(t);
		if (bigger) {
			__atomic_store_n(&c->table, bigger, __ATOMIC_RELEASE);
			t = bigger;
			e = place(t, key);
		}
	}
	if (e && e->key != key) {
		__atomic_store_n(&e->value, value, __ATOMIC_RELAXED);
		__atomic_store_n(&e->key, key, __ATOMIC_RELEASE);
		c->used++;
	}
	gfp_unlock(&put_lock);
	return e != NULL;
}

/* The value for `key`, from the cache or, on a miss, from compute(arg),
 * which runs with the guard raised (it may unwind, name frames or take the
 * loader's lock, and what those allocate must go straight to jemalloc) and
 * never returns 0; the answer is kept for the next call with that key. One
 * piece of code for every answer decided once per call path: site ids,
 * GFP_RULES' masks, the fail.* stack filter. */
uint64_t ipcache_lookup(struct gfp_ipcache *c, uint64_t key, uint64_t (*compute)(const void *arg),
                        const void *arg)
{
	uint64_t value = ipcache_get(c, key);
	if (!value) {
		gfp_tls.guard++;
		value = compute(arg);
		gfp_tls.guard--;
		ipcache_put(c, key, value);
	}
	return value;
}

/* The child has one thread: a lock another thread held at fork is free. */
void ipcache_atfork_child(void)
{
	pthread_mutex_init(&put_lock, NULL);
}
