/*
 * site_deps.c - the objects loaded only because the shim is: what the
 * shim's library needs (Debian's libjemalloc needs libstdc++ and
 * libgcc_s, libunwind needs liblzma) and the program does not. Their
 * constructors run before main in every program under the shim, and what
 * they allocate there (libstdc++'s exception emergency pool) is not the
 * program's: a C program has none without the shim. So their start-up
 * calls are never eligible for injection, fail.startup=1 or not, as the
 * shim's own are not; after main they are the program's like any other
 * library's (a C program's C++ plugin uses that libstdc++).
 *
 * The set is the closure of the shim's DT_NEEDED less that of the main
 * program's, objects matched by file name or DT_SONAME, read from the
 * loader's list of the objects it loaded at start: no allocation, no lock.
 * Decided once, at the first start-up call that asks: the loader maps and
 * relocates every object before it runs the first constructor.
 */
#include <link.h>
#include <stdbool.h>
#include <string.h>

#include "elf_text.h"
#include "site.h"

#define MAX_OBJECTS 512
#define MAX_DEPS    32

static struct link_map *deps[MAX_DEPS];
static int n_deps;
enum { DEPS_NONE, DEPS_BUSY, DEPS_DONE };
static int deps_state; /* atomic */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* An entry of m's dynamic section: the first of tag, or NULL. */
static const ElfW(Dyn) * dyn_entry(const struct link_map *m, ElfW(Sxword) tag)
{
	for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == tag)
			return d;
	return NULL;
}

static const char *dyn_strtab(const struct link_map *m)
{
	const ElfW(Dyn) *d = dyn_entry(m, DT_STRTAB);
	return d ? (const char *)elf_dyn_addr(m, d->d_un.d_ptr) : NULL;
}

/* The object of maps[0..n) that a DT_NEEDED `name` loaded: -1 if none. */
static int find_needed(struct link_map *const *maps, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(base_name(maps[i]->l_name), name) == 0)
			return i;
		const ElfW(Dyn) *so = dyn_entry(maps[i], DT_SONAME);
		const char *strtab = so ? dyn_strtab(maps[i]) : NULL;
		if (strtab && strcmp(strtab + so->d_un.d_val, name) == 0)
			return i;
	}
	return -1;
}

/* Marks in `mark` (as `bit`) the closure of maps[from]'s DT_NEEDED. */
static void mark_closure(struct link_map *const *maps, int n, unsigned char *mark, int from,
                         unsigned char bit)
{
	int queue[MAX_OBJECTS], head = 0, tail = 0;
	mark[from] |= bit;
	queue[tail++] = from;
	while (head < tail) {
		const struct link_map *m = maps[queue[head++]];
		const char *strtab = dyn_strtab(m);
		if (!strtab)
			continue;
		for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
			if (d->d_tag != DT_NEEDED)
				continue;
			int j = find_needed(maps, n, strtab + d->d_un.d_val);
			if (j >= 0 && !(mark[j] & bit)) {
				mark[j] |= bit;
				queue[tail++] = j;
			}
		}
	}
}

static void deps_find(void)
{
	static const char marker;
	uintptr_t base;
	struct link_map *self = site_object((uintptr_t)&marker, &base);
	struct link_map *maps[MAX_OBJECTS];
	unsigned char mark[MAX_OBJECTS] = {0};
	int n = 0, shim = -1;
	for (struct link_map *m = _r_debug.r_map; m && n < MAX_OBJECTS; m = m->l_next) {
		if (m == self)
			shim = n;
		maps[n++] = m;
	}
	if (shim < 0 || n == 0)
		return;
	mark_closure(maps, n, mark, 0, 1); /* the main program's */
	mark_closure(maps, n, mark, shim, 2);
	for (int i = 0; i < n && n_deps < MAX_DEPS; i++)
		if (mark[i] == 2 && i != shim)
			deps[n_deps++] = maps[i];
}

bool site_in_shim_deps(uintptr_t ip)
{
	int s = __atomic_load_n(&deps_state, __ATOMIC_ACQUIRE);
	if (s != DEPS_DONE) {
		/* (another thread's start-up call finds it busy: the program's) */
		if (s == DEPS_BUSY ||
		    !__atomic_compare_exchange_n(&deps_state, &s, DEPS_BUSY, false,
		                                 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
			return false;
		deps_find();
		__atomic_store_n(&deps_state, DEPS_DONE, __ATOMIC_RELEASE);
	}
	uintptr_t base;
	struct link_map *m = site_object(ip, &base);
	for (int i = 0; m && i < n_deps; i++)
		if (deps[i] == m)
			return true;
	return false;
}
