/*
 * sp_header - the public header works with and without the shim.
 *
 *   sp_header plain   run WITHOUT LD_PRELOAD: every call falls back to libc
 *                     or a neutral answer (gfp_active() 0, cookie 0, ...)
 *   sp_header shim    run with the shim and no policy: gfp_active() 1 and
 *                     the same calls work
 * Prints "ok - ..." / "not ok - ..."; exit 1 on any failure.
 */
#include <stdint.h>

#include "sp_common.h"

static int failures;

static void check(int ok, const char *what)
{
	sp_out(1, "%s - %s\n", ok ? "ok" : "not ok", what);
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

int main(int argc, char **argv)
{
	int shim = argc > 1 && !strcmp(argv[1], "shim");

	check(gfp_active() == shim, shim ? "gfp_active() is 1 under the shim"
					 : "gfp_active() is 0 without the shim");
	char *p = gfp_malloc(100, GFP_KERNEL);
	check(p != NULL, "gfp_malloc(100, GFP_KERNEL) returns memory");
	memset(p, 'x', 100);
	p = gfp_realloc(p, 5000, GFP_NOFS);
	int kept = p != NULL;
	for (int i = 0; kept && i < 100; i++)
		kept = p[i] == 'x';
	check(kept, "gfp_realloc keeps the contents");
	free(p);
	unsigned char *z = gfp_calloc(1000, 10, GFP_NOIO | GFP_NOFAIL);
	int zero = z != NULL;
	for (int i = 0; zero && i < 10000; i++)
		zero = z[i] == 0;
	check(zero, "gfp_calloc returns zeroed memory");
	free(z);
	void *a = gfp_aligned_alloc(4096, 8192, GFP_ATOMIC);
	check(a != NULL && ((uintptr_t)a & 4095) == 0, "gfp_aligned_alloc aligns");
	free(a);
	errno = 0;
	check(gfp_malloc(SIZE_MAX / 2, GFP_KERNEL | GFP_NOWARN) == NULL && errno == ENOMEM,
	      "an impossible gfp_malloc returns NULL with ENOMEM");

	unsigned c = gfp_scope_push(GFP_NOFS);
	if (!shim)
		check(c == 0, "gfp_scope_push returns 0 without the shim");
	p = malloc(10);
	check(p != NULL, "malloc inside a scope works");
	free(p);
	gfp_scope_pop(c);
	int r = gfp_reserve(1 << 20, GFP_KERNEL);
	check(r == 0, "gfp_reserve returns 0");
	gfp_unreserve();
	if (!shim) {
		check(gfp_shrinker_register(never_shrink, NULL, GFP_SHRINK_FS) == 0,
		      "gfp_shrinker_register returns 0 without the shim");
		check(gfp_oom_notifier_register(never_notify, NULL) == 0,
		      "gfp_oom_notifier_register returns 0 without the shim");
	}
	sp_out(1, "%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
