/*
 * backend.c - which jemalloc function serves which request.
 *
 * The x-API (mallocx, dallocx, rallocx) carries every flag we need, but
 * jemalloc 5.3 gives it no fast path: mallocx and dallocx cost about three
 * times malloc and free (93 and 90 instructions against ~35, measured with
 * callgrind). So wherever no flag is needed - the idle fast path, the routes
 * of preload/malloc.c, the policy's plain attempts - requests go to
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

#include "backend.h"
#include "site.h"

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

static fn_t lookup(void *handle, const Dl_info *je, const char *name)
{
	/* POSIX guarantees dlsym's object pointer converts to a function. */
	fn_t f;
	void *sym = dlsym(handle, name);
	Dl_info info;
	if (!sym || !dladdr(sym, &info) || info.dli_fbase != je->dli_fbase)
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
	gfp_je_text = site_text_of(info);
	return 1;
}

void backend_init(void)
{
	Dl_info je;
	void *(*x)(size_t, int) = mallocx;
	void *xaddr;
	__builtin_memcpy(&xaddr, &x, sizeof(xaddr));
	if (!dladdr(xaddr, &je) || !je.dli_fname)
		return;
	dl_iterate_phdr(find_text, je.dli_fbase);
	void *handle = dlopen(je.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!handle)
		return;
	fn_t m = lookup(handle, &je, "malloc"), f = lookup(handle, &je, "free"),
	     r = lookup(handle, &je, "realloc"), c = lookup(handle, &je, "calloc"),
	     a = lookup(handle, &je, "posix_memalign"), aa = lookup(handle, &je, "aligned_alloc");
	if (m && f && r && c && a && aa) {
		gfp_je_malloc = (void *(*)(size_t))m;
		gfp_je_free = (void (*)(void *))f;
		gfp_je_realloc = (void *(*)(void *, size_t))r;
		gfp_je_calloc = (void *(*)(size_t, size_t))c;
		gfp_je_posix_memalign = (int (*)(void **, size_t, size_t))a;
		gfp_je_aligned_alloc = (void *(*)(size_t, size_t))aa;
		gfp_je_own = true;
	}
	/* The handle stays open: libjemalloc is our dependency anyway. */
}
