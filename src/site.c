/*
 * site.c - where a call comes from: the text of the shim, ld.so and libc,
 * the first frame outside libc, the loaded object and module of an address,
 * the raw frames (site_ips) and a key of them (site_key). path.c makes call
 * path ids of these, ipcache.c caches what is computed per key.
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
#include "elf_text.h"
#include "unwind_gate.h"

static struct gfp_range self_text, ldso_text, libc_text;

static int find_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t self_base = (uintptr_t)arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	struct gfp_range text = elf_text_of(info);
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

/* A key for raw return addresses: stable within a process, never 0. */
uint64_t site_key(const uintptr_t *ips, int n)
{
	uint64_t key = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < n; i++)
		key = (key ^ ips[i]) * 0xff51afd7ed558ccdULL;
	return key | 1;
}
