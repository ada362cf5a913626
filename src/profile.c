/*
 * profile.c - per-call-site statistics (stats=sites, and paths), like the
 * kernel's allocation profiling (/proc/allocinfo, kernel-semantics.md §10).
 *
 * A site is the return address of the allocation entry point, or, when that
 * lies in libc (strdup, getline, fopen), the first frame outside libc: the
 * kernel's codetag is a call site in the source, and so is this. Sites get a
 * small index the first time they are seen (a lock-free cache keyed by the
 * address, site.c), and each thread counts into its own array, indexed by
 * site, that only it writes: no atomic read-modify-write on a call.
 *
 * Live bytes need the site of the block being freed. Like the kernel's slab
 * object extensions, a shadow map keeps a 16-bit site index for every 8-byte
 * granule that starts a block: a directory of 2 MiB chunks (open addressing,
 * filled under a lock once per chunk) pointing to leaves of 256K entries,
 * mapped on first use. A free reads and clears its block's entry, and the
 * freeing thread takes the bytes off that site in its own array, so the sum
 * over threads is exact.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include <jemalloc/jemalloc.h>

#include "internal.h"

#define MAX_SITES   16384 /* index 0: not tracked */
#define CHUNK_SHIFT 21
#define GRANULE     3
#define LEAF_LEN    (1u << (CHUNK_SHIFT - GRANULE))
#define DIR_LEN     65536 /* 128 GiB of heap in 2 MiB chunks */

bool gfp_profile_on;

static uintptr_t site_addr[MAX_SITES]; /* the address that names each site */
static unsigned nsites;                /* atomic */
static struct gfp_ipcache index_of;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct gfp_site_counts dead[MAX_SITES]; /* exited threads, under lock */
static bool warned_full;

static struct {
	uintptr_t chunk; /* atomic: chunk number + 1; 0 = empty */
	uint16_t *leaf;
} dir[DIR_LEN];

void profile_init(void)
{
	gfp_profile_on = gfp_policy.stats >= GFP_STATS_SITES;
}

/* ------------------------------------------------------------------------
 * Sites
 * ---------------------------------------------------------------------- */

static unsigned site_index_slow(const struct gfp_req *req);

/* A thread's last site, and the leaf of its last chunk: loops allocate from
 * one place into one region. */
static __thread struct {
	uintptr_t caller;
	unsigned idx;
	uintptr_t chunk;
	uint16_t *leaf;
} last __attribute__((tls_model("initial-exec")));

static unsigned site_index(const struct gfp_req *req)
{
	if (req->caller && req->caller == last.caller)
		return last.idx;
	unsigned idx = site_index_slow(req);
	/* A caller inside libc (strdup) is many sites: only the return
	 * address names the site by itself may be remembered. */
	if (idx && req->caller && !site_in_libc(req->caller) && !site_in_shim(req->caller)) {
		last.caller = req->caller;
		last.idx = idx;
	}
	return idx;
}

static unsigned site_index_slow(const struct gfp_req *req)
{
	uintptr_t addr = site_outside_libc(req->caller);
	uint64_t key = site_key(&addr, 1);
	unsigned idx = (unsigned)ipcache_get(&index_of, key);
	if (idx)
		return idx;
	pthread_mutex_lock(&lock);
	idx = (unsigned)ipcache_get(&index_of, key);
	/* A site the cache could not keep is looked for in the table itself,
	 * so that it never gets a second index. */
	for (unsigned i = 1; !idx && i <= nsites; i++)
		if (site_addr[i] == addr)
			idx = i;
	if (!idx && nsites + 1 < MAX_SITES) {
		idx = nsites + 1;
		site_addr[idx] = addr;
		__atomic_store_n(&nsites, idx, __ATOMIC_RELEASE);
		ipcache_put(&index_of, key, idx);
	}
	bool full = !idx && !warned_full;
	warned_full |= full;
	pthread_mutex_unlock(&lock);
	if (full)
		gfp_log(GFP_LOG_WARNING,
		        "stats=sites: more than %d call sites; the rest are not "
		        "counted per site",
		        MAX_SITES - 1);
	return idx;
}

/* ------------------------------------------------------------------------
 * The shadow map
 * ---------------------------------------------------------------------- */

static uint16_t *leaf_lookup(uintptr_t addr, bool create);

static uint16_t *leaf_of(uintptr_t addr, bool create)
{
	uintptr_t chunk = (addr >> CHUNK_SHIFT) + 1;
	if (chunk == last.chunk)
		return last.leaf;
	uint16_t *leaf = leaf_lookup(addr, create);
	if (leaf) {
		last.chunk = chunk;
		last.leaf = leaf;
	}
	return leaf;
}

static uint16_t *leaf_lookup(uintptr_t addr, bool create)
{
	uintptr_t chunk = (addr >> CHUNK_SHIFT) + 1;
	for (unsigned i = 0; i < 64; i++) {
		unsigned slot = (unsigned)((chunk * 0x9e3779b97f4a7c15ULL) >> 48) + i;
		slot %= DIR_LEN;
		uintptr_t c = __atomic_load_n(&dir[slot].chunk, __ATOMIC_ACQUIRE);
		if (c == chunk)
			return dir[slot].leaf;
		if (c != 0)
			continue;
		if (!create)
			return NULL;
		uint16_t *leaf = NULL;
		pthread_mutex_lock(&lock);
		c = __atomic_load_n(&dir[slot].chunk, __ATOMIC_RELAXED);
		if (c == 0) {
			void *m = mmap(NULL, LEAF_LEN * sizeof(uint16_t), PROT_READ | PROT_WRITE,
			               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (m != MAP_FAILED) {
				dir[slot].leaf = m;
				__atomic_store_n(&dir[slot].chunk, chunk, __ATOMIC_RELEASE);
				leaf = m;
			}
		} else if (c == chunk) {
			leaf = dir[slot].leaf;
		}
		pthread_mutex_unlock(&lock);
		if (leaf || c == 0)
			return leaf;
	}
	return NULL;
}

/* false when no leaf could hold it: the block is then not counted live. */
static bool shadow_set(const void *p, unsigned idx)
{
	uintptr_t a = (uintptr_t)p;
	uint16_t *leaf = leaf_of(a, idx != 0);
	if (leaf)
		leaf[(a & ((1u << CHUNK_SHIFT) - 1)) >> GRANULE] = (uint16_t)idx;
	return leaf != NULL;
}

/* The site index of the block at p, cleared: the block is going away. */
static unsigned shadow_take(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	uint16_t *leaf = leaf_of(a, false);
	if (!leaf)
		return 0;
	uint16_t *e = &leaf[(a & ((1u << CHUNK_SHIFT) - 1)) >> GRANULE];
	unsigned idx = *e;
	*e = 0;
	return idx;
}

/* ------------------------------------------------------------------------
 * Counting (each thread in its own array)
 * ---------------------------------------------------------------------- */

static struct gfp_site_counts *counts(void)
{
	struct gfp_thread *t = gfp_tls.thread;
	if (!t)
		return NULL;
	if (!t->sites) {
		void *m =
		    mmap(NULL, MAX_SITES * sizeof(struct gfp_site_counts), PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		__atomic_store_n(&t->sites, m, __ATOMIC_RELEASE);
	}
	return t->sites;
}

static void add(int64_t *c, int64_t v)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/* Before a realloc: what the old block was and where it came from. */
/* Before a realloc: the old block's size and site, taken out of the map
 * while the block is still ours (once rallocx has moved it, another thread
 * may already have its address). */
void profile_before_realloc(struct gfp_req *req)
{
	req->old_usable = sallocx(req->old, 0);
	req->old_site = shadow_take(req->old);
}

/* A request ended: p is the block, or NULL. */
void profile_count(struct gfp_req *req, void *p)
{
	struct gfp_site_counts *c = counts();
	if (!c)
		return;
	gfp_tls.guard++;
	unsigned idx = site_index(req);
	if (req->old && req->old_usable) { /* profile_before_realloc took it */
		unsigned old = req->old_site;
		if (!p) {
			shadow_set(req->old, old); /* failed: the old block stays */
		} else if (old) {
			/* Gone, or grown in place into p: its bytes leave its site. */
			add(&c[old].live_bytes, -(int64_t)req->old_usable);
			add(&c[old].live_calls, -1);
		}
	}
	if (idx) {
		struct gfp_site_counts *s = &c[idx];
		add((int64_t *)&s->calls, 1);
		if (p) {
			add((int64_t *)&s->bytes, (int64_t)req->size);
			if (shadow_set(p, idx)) {
				add(&s->live_bytes, (int64_t)sallocx(p, 0));
				add(&s->live_calls, 1);
			}
		} else {
			add((int64_t *)&s->failures, 1);
			if (req->why == GFP_WHY_INJECT)
				add((int64_t *)&s->injections, 1);
		}
	}
	if (p && !idx)
		shadow_set(p, 0); /* an uncounted block: no stale site at its address */
	gfp_tls.guard--;
}

/* The slow path's share: rounds beyond the first, and how long it took. */
void profile_slow(struct gfp_req *req, unsigned rounds, uint64_t ns)
{
	struct gfp_site_counts *c = counts();
	if (!c)
		return;
	gfp_tls.guard++;
	unsigned idx = site_index(req);
	gfp_tls.guard--;
	if (!idx)
		return;
	if (rounds > 1)
		add((int64_t *)&c[idx].retries, rounds - 1);
	if (ns > c[idx].max_stall_ns)
		__atomic_store_n(&c[idx].max_stall_ns, ns, __ATOMIC_RELAXED);
}

void profile_free(const void *p)
{
	unsigned idx = shadow_take(p);
	if (!idx)
		return;
	struct gfp_site_counts *c = counts();
	if (!c)
		return;
	add(&c[idx].live_bytes, -(int64_t)sallocx(p, 0));
	add(&c[idx].live_calls, -1);
}

/* ------------------------------------------------------------------------
 * Threads and the report
 * ---------------------------------------------------------------------- */

static void fold(struct gfp_site_counts *into, const struct gfp_site_counts *from, unsigned n)
{
	for (unsigned i = 1; i <= n; i++) {
		const struct gfp_site_counts *f = &from[i];
		struct gfp_site_counts *t = &into[i];
		t->live_bytes += __atomic_load_n(&f->live_bytes, __ATOMIC_RELAXED);
		t->live_calls += __atomic_load_n(&f->live_calls, __ATOMIC_RELAXED);
		t->calls += __atomic_load_n(&f->calls, __ATOMIC_RELAXED);
		t->bytes += __atomic_load_n(&f->bytes, __ATOMIC_RELAXED);
		t->failures += __atomic_load_n(&f->failures, __ATOMIC_RELAXED);
		t->injections += __atomic_load_n(&f->injections, __ATOMIC_RELAXED);
		t->retries += __atomic_load_n(&f->retries, __ATOMIC_RELAXED);
		uint64_t m = __atomic_load_n(&f->max_stall_ns, __ATOMIC_RELAXED);
		if (m > t->max_stall_ns)
			t->max_stall_ns = m;
	}
}

/* A thread ends: its counts join the dead threads' and its array is
 * cleared for the next thread that gets its block. */
void profile_thread_exit(struct gfp_thread *t)
{
	if (!t->sites)
		return;
	unsigned n = __atomic_load_n(&nsites, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&lock);
	fold(dead, t->sites, n);
	pthread_mutex_unlock(&lock);
	memset(t->sites, 0, (n + 1) * sizeof(struct gfp_site_counts));
}

static int by_live_bytes(const void *a, const void *b)
{
	const struct gfp_site_counts *x = a, *y = b;
	return x->live_bytes < y->live_bytes ? 1 : x->live_bytes > y->live_bytes ? -1 : 0;
}

struct row {
	struct gfp_site_counts c; /* first: by_live_bytes compares it */
	unsigned idx;
};

void profile_report(struct gfp_buf *b)
{
	static struct row rows[MAX_SITES];
	static struct gfp_site_counts sum[MAX_SITES];
	unsigned n = __atomic_load_n(&nsites, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&lock);
	memcpy(sum, dead, (n + 1) * sizeof(sum[0]));
	pthread_mutex_unlock(&lock);
	thread_each_sites(fold, sum, n);
	unsigned nr = 0;
	for (unsigned i = 1; i <= n; i++)
		if (sum[i].calls)
			rows[nr++] = (struct row){sum[i], i};
	qsort(rows, nr, sizeof(rows[0]), by_live_bytes);
	gfp_buf_printf(b, ",\"allocinfo\":[");
	for (unsigned r = 0; r < nr; r++) {
		const struct gfp_site_counts *c = &rows[r].c;
		uintptr_t ip = site_addr[rows[r].idx];
		uintptr_t off = ip;
		const char *mod = site_module(ip, &off);
		if (!mod)
			mod = "?";
		else if (!*mod)
			mod = program_invocation_short_name;
		/* Exported names only; gfp-report names the rest from the
		 * module's symbol tables and debug information. */
		const char *sym = "";
		uintptr_t symoff = 0;
		Dl_info info;
		if (dladdr((void *)ip, &info) && info.dli_sname) {
			sym = info.dli_sname;
			symoff = ip - (uintptr_t)info.dli_saddr;
		}
		gfp_buf_printf(b, "%s{\"module\":", r ? "," : "");
		gfp_buf_json_str(b, mod);
		gfp_buf_printf(b, ",\"offset\":\"%#lx\"", (unsigned long)off);
		if (sym[0]) {
			char s[160];
			gfp_snprintf(s, sizeof(s), "%s+%#lx", sym, (unsigned long)symoff);
			gfp_buf_printf(b, ",\"symbol\":");
			gfp_buf_json_str(b, s);
		}
		gfp_buf_printf(
		    b,
		    ",\"live_bytes\":%lld,\"live_calls\":%lld,\"calls\":%llu,\"bytes\":%llu,"
		    "\"failures\":%llu,\"injections\":%llu,\"retries\":%llu,"
		    "\"max_stall_us\":%llu}",
		    (long long)c->live_bytes, (long long)c->live_calls,
		    (unsigned long long)c->calls, (unsigned long long)c->bytes,
		    (unsigned long long)c->failures, (unsigned long long)c->injections,
		    (unsigned long long)c->retries, (unsigned long long)(c->max_stall_ns / 1000));
	}
	gfp_buf_printf(b, "]");
}

void profile_atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
}
