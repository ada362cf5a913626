/*
 * site.c - call sites: the path of the first site.depth frames outside the
 * shim, named by module and offset so that an id is the same across runs,
 * ASLR and machines with the same binaries. libc's frames stay in the path:
 * strdup called from two places is two sites.
 *
 * Resolving frames to module+offset takes the loader's lock (dladdr), so ids
 * are cached by the raw return addresses, which are stable within a process.
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h> /* program_invocation_name */
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "meaning.h"
#include "thread.h"
#include "site.h"
#include "unwind.h"

static struct gfp_range self_text, ldso_text, libc_text;

struct gfp_range site_text_of(const struct dl_phdr_info *info)
{
	struct gfp_range r = {UINTPTR_MAX, 0};
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		r.start = start < r.start ? start : r.start;
		r.end = end > r.end ? end : r.end;
	}
	return r.end ? r : (struct gfp_range){0, 0};
}

static int find_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t self_base = (uintptr_t)arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	struct gfp_range text = site_text_of(info);
	if (strstr(name, "/ld-linux") || strstr(name, "/ld64.so") || strstr(name, "/ld.so"))
		ldso_text = text;
	if (info->dlpi_addr == self_base)
		self_text = text;
	const char *slash = strrchr(name, '/');
	if (strncmp(slash ? slash + 1 : name, "libc.so", 7) == 0)
		libc_text = text;
	return 0;
}

void site_init(void)
{
	static const char marker;
	Dl_info di;
	gfp_tls.guard++;
	if (dladdr(&marker, &di))
		dl_iterate_phdr(find_ranges, di.dli_fbase);
	gfp_tls.guard--;
}

bool site_in_shim(uintptr_t ip)
{
	return ip >= self_text.start && ip < self_text.end;
}

bool site_in_ldso(uintptr_t ip)
{
	return ip >= ldso_text.start && ip < ldso_text.end;
}

bool site_in_libc(uintptr_t ip)
{
	return ip >= libc_text.start && ip < libc_text.end;
}

/* The first of `ips` outside libc, else the first, else 0. */
uintptr_t site_first_outside_libc(const uintptr_t *ips, int n)
{
	for (int i = 0; i < n; i++)
		if (!site_in_libc(ips[i]))
			return ips[i];
	return n ? ips[0] : 0;
}

/* The first frame outside the shim and libc: the caller of strdup or
 * getline, not the wrapper. That is the entry's return address unless it
 * lies in libc; only then does it cost an unwind. */
uintptr_t site_outside_libc(uintptr_t caller)
{
	if (caller && !site_in_libc(caller) && !site_in_shim(caller))
		return caller;
	uintptr_t ips[16];
	uintptr_t ip = site_first_outside_libc(ips, site_ips(ips, 16));
	return ip ? ip : caller;
}

int site_ips(uintptr_t *ips, int max)
{
	void *raw[64 + 16];
	int want = max + 16 < 80 ? max + 16 : 80;
	if (!unwind_setup())
		return 0;
	gfp_tls.guard++;
	unwind_enter();
	int n = unw_backtrace(raw, want);
	unwind_leave();
	gfp_tls.guard--;
	int out = 0, i = 0;
	while (i < n && site_in_shim((uintptr_t)raw[i]))
		i++;
	for (; i < n && out < max; i++)
		ips[out++] = (uintptr_t)raw[i];
	return out;
}

/* _dl_find_object, not dladdr: dladdr also looks for the nearest dynamic
 * symbol, a scan of the whole table (python3's has thousands) per frame;
 * this is a lock-free search of the loaded objects. The base is dladdr's
 * dli_fbase (the start of the mapping, not the load bias), so that offsets,
 * and the site ids made of them, are what they were. */
struct link_map *site_object(uintptr_t ip, uintptr_t *base)
{
	struct dl_find_object o;
	if (_dl_find_object((void *)ip, &o) != 0 || !o.dlfo_link_map)
		return NULL;
	*base = (uintptr_t)o.dlfo_map_start;
	return o.dlfo_link_map;
}

const char *site_module(uintptr_t ip, uintptr_t *off)
{
	uintptr_t base;
	struct link_map *lm = site_object(ip, &base);
	if (!lm || !lm->l_name)
		return NULL;
	/* The program's l_name is empty; dladdr names it by argv[0]. */
	const char *path = lm->l_name[0] ? lm->l_name : program_invocation_name;
	const char *slash = strrchr(path, '/');
	*off = ip - base;
	return slash ? slash + 1 : path;
}

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

/* A key for raw return addresses: stable within a process, never 0. */
uint64_t site_key(const uintptr_t *ips, int n)
{
	uint64_t key = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < n; i++)
		key = (key ^ ips[i]) * 0xff51afd7ed558ccdULL;
	return key | 1;
}

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
	struct gfp_iptable *t = mmap(NULL, sizeof *t + n * sizeof t->e[0], PROT_READ | PROT_WRITE,
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
void site_atfork_child(void)
{
	pthread_mutex_init(&put_lock, NULL);
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
bool site_path_may_be(uintptr_t caller, uint64_t id)
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

uint64_t site_unwinds(void)
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
