/*
 * sp_header - the public header works with and without the shim, in every
 * language standard: meson builds it as gnu11, header_std.sh as C89 ... C2x
 * and as C++98 ... C++20.
 *
 *   sp_header plain   run WITHOUT LD_PRELOAD: every call falls back to libc
 *                     or a neutral answer (gfp_active() 0, cookie 0, ...)
 *   sp_header shim    run with the shim and no policy: gfp_active() 1 and
 *                     the same calls work
 *
 * Written in the common subset of C89 and C++ (declarations first, casts
 * from void *). Prints "ok - ..." / "not ok - ..."; exit 1 on any failure.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gfpshim.h"

static int failures;

static void check(int ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	if (!ok)
		failures++;
}

static size_t never_shrink(void *arg, size_t want, gfp_t ctx)
{
	(void)arg;
	(void)want;
	(void)ctx;
	return 0;
}

static size_t never_notify(void *arg)
{
	(void)arg;
	return 0;
}

/* Whether `p` is aligned to `align` and its `size` bytes can be written. */
static int aligned_block(void *p, size_t align, size_t size)
{
	if (p == NULL || (unsigned long)p % align != 0)
		return 0;
	memset(p, 0x5a, size);
	return ((unsigned char *)p)[size - 1] == 0x5a;
}

int main(int argc, char **argv)
{
	int shim = argc > 1 && strcmp(argv[1], "shim") == 0;
	char *p;
	unsigned char *z;
	void *a;
	unsigned cookie;
	size_t i;
	int ok;

	check(gfp_active() == shim, shim ? "gfp_active() is 1" : "gfp_active() is 0");
	p = (char *)gfp_malloc(100, GFP_KERNEL);
	check(p != NULL, "gfp_malloc returns memory");
	if (p)
		memset(p, 'x', 100);
	p = (char *)gfp_realloc(p, 5000, GFP_NOFS);
	ok = p != NULL;
	for (i = 0; ok && i < 100; i++)
		ok = p[i] == 'x';
	check(ok, "gfp_realloc keeps the contents");
	free(p);
	z = (unsigned char *)gfp_calloc(1000, 10, GFP_NOIO | GFP_NOFAIL);
	ok = z != NULL;
	for (i = 0; ok && i < 10000; i++)
		ok = z[i] == 0;
	check(ok, "gfp_calloc returns zeroed memory");
	free(z);

	/* A pointer cut to an int would not be aligned, or would fault. */
	a = gfp_aligned_alloc(4096, 8192, GFP_ATOMIC);
	check(aligned_block(a, 4096, 8192), "gfp_aligned_alloc(4096, 8192) aligns");
	free(a);
	a = gfp_aligned_alloc(64, 64 * 1024 * 1024, GFP_KERNEL);
	check(aligned_block(a, 64, 64 * 1024 * 1024), "gfp_aligned_alloc(64, 64 MiB) aligns");
	free(a);
	errno = 0;
	check(gfp_malloc((size_t)-1 / 2, GFP_KERNEL | GFP_NOWARN) == NULL && errno == ENOMEM,
	      "an impossible gfp_malloc returns NULL with ENOMEM");
	errno = 0;
	a = gfp_aligned_alloc(64, (size_t)-1 / 2, GFP_KERNEL | GFP_NOWARN);
	check(a == NULL && errno == ENOMEM, "an impossible gfp_aligned_alloc fails with ENOMEM");

	cookie = gfp_scope_push(GFP_NOFS);
	check(shim || cookie == 0, "gfp_scope_push returns 0 without the shim");
	p = (char *)malloc(10);
	check(p != NULL, "malloc inside a scope works");
	free(p);
	gfp_scope_pop(cookie);
	check(gfp_reserve(1 << 20, GFP_KERNEL) == 0, "gfp_reserve returns 0");
	gfp_unreserve();
	check(gfp_shrinker_register(never_shrink, NULL, GFP_SHRINK_FS) == 0,
	      "gfp_shrinker_register returns 0");
	check(gfp_oom_notifier_register(never_notify, NULL) == 0,
	      "gfp_oom_notifier_register returns 0");
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
