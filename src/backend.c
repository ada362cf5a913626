/*
 * backend.c - which jemalloc function serves which request.
 *
 * The x-API (mallocx, dallocx, rallocx) carries every flag we need, but
 * jemalloc 5.3 gives it no fast path: mallocx and dallocx cost about three
 * times malloc and free (93 and 90 instructions against ~35, measured with
 * callgrind). So wherever no flag is needed - the idle fast path, the routes
 * of preload/routes.c, the policy's plain attempts - requests go to
 * jemalloc's own malloc, calloc, posix_memalign, aligned_alloc, realloc and
 * free, looked up inside libjemalloc's object itself (never by their global
 * names, which are ours). Anything with other flags uses the x-API.
 *
 * It also records where jemalloc's code lies, for preload/oscalls.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <link.h>
#include <string.h>

#include "backend.h"
#include "elf_text.h"

static void *via_mallocx(size_t n)
{
	return mallocx(n ? n : 1, 0);
}

static void via_dallocx(void *p)
{
	if (p)
		dallocx(p, 0);
}

static void *via_rallocx(void *p, size_t n)
{
	return rallocx(p, n, 0);
}

static void *via_mallocx_zero(size_t nmemb, size_t n)
{
	size_t total = nmemb * n; /* callers checked the overflow */
	return mallocx(total ? total : 1, MALLOCX_ZERO);
}

static int via_mallocx_align(void **out, size_t align, size_t n)
{
	void *p = mallocx(n ? n : 1, MALLOCX_ALIGN(align));
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

static void *via_mallocx_aligned(size_t align, size_t n)
{
	void *p = mallocx(n ? n : 1, MALLOCX_ALIGN(align));
	if (!p)
		errno = ENOMEM;
	return p;
}

void *(*gfp_je_malloc)(size_t) = via_mallocx;
void (*gfp_je_free)(void *) = via_dallocx;
void *(*gfp_je_realloc)(void *, size_t) = via_rallocx;
void *(*gfp_je_calloc)(size_t, size_t) = via_mallocx_zero;
int (*gfp_je_posix_memalign)(void **, size_t, size_t) = via_mallocx_align;
void *(*gfp_je_aligned_alloc)(size_t, size_t) = via_mallocx_aligned;

/* `name` from the object that defines mallocx, or NULL when that object does
 * not define it (a jemalloc built with a prefix: the x-API then serves). */
typedef void (*fn_t)(void);

/* The object's dynamic symbol tables, found by its link map: a lookup there
 * costs no dlopen (whose RTLD_NOLOAD handle cost a tenth of a million
 * instructions at every start). */
struct dyn_tables {
	ElfW(Addr) base;
	const ElfW(Sym) * sym;
	const char *str;
	const uint32_t *gnu_hash;
};

static bool dyn_tables(const struct link_map *map, struct dyn_tables *t)
{
	*t = (struct dyn_tables){.base = map->l_addr};
	for (const ElfW(Dyn) *d = map->l_ld; d && d->d_tag != DT_NULL; d++) {
		ElfW(Addr) a = elf_dyn_addr(map, d->d_un.d_ptr);
		if (d->d_tag == DT_SYMTAB)
			t->sym = (const ElfW(Sym) *)a;
		else if (d->d_tag == DT_STRTAB)
			t->str = (const char *)a;
		else if (d->d_tag == DT_GNU_HASH)
			t->gnu_hash = (const uint32_t *)a;
	}
	return t->sym && t->str && t->gnu_hash;
}

/* `name`, defined in the object (its GNU hash table, as ld.so reads it). */
static void *dyn_lookup(const struct dyn_tables *t, const char *name)
{
	uint32_t nbuckets = t->gnu_hash[0], symoffset = t->gnu_hash[1], bloom_size = t->gnu_hash[2];
	const uint32_t *buckets = t->gnu_hash + 4 + bloom_size * (sizeof(ElfW(Addr)) / 4);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t h = 5381;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	if (!nbuckets)
		return NULL;
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		uint32_t h2 = chain[i - symoffset];
		const ElfW(Sym) *s = &t->sym[i];
		if ((h | 1) == (h2 | 1) && strcmp(t->str + s->st_name, name) == 0)
			return s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_FUNC
			           ? (void *)(t->base + s->st_value)
			           : NULL;
		if (h2 & 1)
			return NULL;
	}
}

/* A function the object defines itself (its own table says so). */
static fn_t lookup(const struct dyn_tables *t, const char *name)
{
	fn_t f;
	void *sym = dyn_lookup(t, name);
	if (!sym)
		return NULL;
	__builtin_memcpy(&f, &sym, sizeof(f));
	return f;
}

struct gfp_range gfp_je_text;
bool gfp_je_own;

/* dl_iterate_phdr's callback: the text of the object loaded at `base`. */
static int find_text(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	if (info->dlpi_addr != (uintptr_t)base)
		return 0;
	gfp_je_text = elf_text_of(info);
	return 1;
}

void backend_init(void)
{
	Dl_info je;
	void *(*x)(size_t, int) = mallocx;
	void *xaddr;
	struct link_map *map = NULL;
	struct dyn_tables t;
	__builtin_memcpy(&xaddr, &x, sizeof(xaddr));
	if (!dladdr1(xaddr, &je, (void **)&map, RTLD_DL_LINKMAP) || !je.dli_fname)
		return;
	dl_iterate_phdr(find_text, je.dli_fbase);
	if (!map || !dyn_tables(map, &t))
		return;
	fn_t m = lookup(&t, "malloc"), f = lookup(&t, "free"), r = lookup(&t, "realloc"),
	     c = lookup(&t, "calloc"), a = lookup(&t, "posix_memalign"),
	     aa = lookup(&t, "aligned_alloc");
	if (m && f && r && c && a && aa) {
		gfp_je_malloc = (void *(*)(size_t))m;
		gfp_je_free = (void (*)(void *))f;
		gfp_je_realloc = (void *(*)(void *, size_t))r;
		gfp_je_calloc = (void *(*)(size_t, size_t))c;
		gfp_je_posix_memalign = (int (*)(void **, size_t, size_t))a;
		gfp_je_aligned_alloc = (void *(*)(size_t, size_t))aa;
		gfp_je_own = true;
	}
}
