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
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"

struct range {
	uintptr_t start, end;
};

static struct range self_text, ldso_text;

static int find_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t self_base = (uintptr_t)arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		if (strstr(name, "/ld-linux") || strstr(name, "/ld64.so") || strstr(name, "/ld.so"))
			ldso_text = (struct range){start, end};
		if (info->dlpi_addr == self_base)
			self_text = (struct range){start, end};
	}
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

int site_ips(uintptr_t *ips, int max)
{
	void *raw[64 + 16];
	int want = max + 16 < 80 ? max + 16 : 80;
	gfp_tls.guard++;
	int n = unw_backtrace(raw, want);
	gfp_tls.guard--;
	int out = 0, i = 0;
	while (i < n && site_in_shim((uintptr_t)raw[i]))
		i++;
	for (; i < n && out < max; i++)
		ips[out++] = (uintptr_t)raw[i];
	return out;
}

/* FNV-1a over "module+offset;" of each frame. */
static uint64_t hash_frames(const uintptr_t *ips, int n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	gfp_tls.guard++;
	for (int i = 0; i < n; i++) {
		Dl_info info;
		const char *mod = "?";
		uintptr_t off = ips[i];
		if (dladdr((void *)ips[i], &info) && info.dli_fname) {
			const char *slash = strrchr(info.dli_fname, '/');
			mod = slash ? slash + 1 : info.dli_fname;
			off = ips[i] - (uintptr_t)info.dli_fbase;
		}
		for (const char *c = mod; *c; c++)
			h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
		for (int b = 0; b < 8; b++)
			h = (h ^ ((off >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
	}
	gfp_tls.guard--;
	return h;
}

#define CACHE 4096
struct cache_entry {
	uint64_t key; /* atomic: hash of the raw addresses; 0 = empty */
	uint64_t id;  /* atomic */
};
static struct cache_entry cache[CACHE];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t site_id(const uintptr_t *ips, int n)
{
	uint64_t key = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < n; i++)
		key = (key ^ ips[i]) * 0xff51afd7ed558ccdULL;
	key |= 1;
	for (unsigned i = 0; i < 8; i++) {
		struct cache_entry *e = &cache[(key + i) % CACHE];
		if (__atomic_load_n(&e->key, __ATOMIC_ACQUIRE) == key)
			return __atomic_load_n(&e->id, __ATOMIC_RELAXED);
	}
	uint64_t id = hash_frames(ips, n);
	/* Slots are only ever filled: id first, then the key that publishes it. */
	pthread_mutex_lock(&cache_lock);
	for (unsigned i = 0; i < 8; i++) {
		struct cache_entry *e = &cache[(key + i) % CACHE];
		if (__atomic_load_n(&e->key, __ATOMIC_RELAXED) == 0) {
			__atomic_store_n(&e->id, id, __ATOMIC_RELAXED);
			__atomic_store_n(&e->key, key, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return id;
}

uint64_t site_of_caller(void)
{
	uintptr_t ips[32];
	int n = site_ips(ips, (int)gfp_policy.site_depth);
	return site_id(ips, n);
}
