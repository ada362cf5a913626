/*
 * The malloc family's contract as glibc 2.36 states it. The same binary runs
 * twice: without the shim (proving the expectations are glibc's) and under
 * it (proving the shim keeps them). argv[1] says which: "plain" or "shim".
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gfpshim.h"

static int failures;
#define EXPECT(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "line %d: expected %s\n", __LINE__, #cond);                \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* Sizes no allocator can serve; jemalloc and glibc both answer NULL. */
#define HUGE ((size_t)1 << 62)

/* Calls through volatile pointers, so the compiler cannot fold them away. */
static void *(*volatile p_malloc)(size_t) = malloc;
static void *(*volatile p_realloc)(void *, size_t) = realloc;
static void *(*volatile p_memalign)(size_t, size_t) = memalign;
static void *(*volatile p_aligned_alloc)(size_t, size_t) = aligned_alloc;
static void *(*volatile p_calloc)(size_t, size_t) = calloc;
static void *(*volatile p_reallocarray)(void *, size_t, size_t) = reallocarray;
/* GCC assumes free leaves errno alone and would not read it again. */
static void (*volatile p_free)(void *) = free;
static volatile size_t too_many_c = SIZE_MAX / 2;

int main(int argc, char **argv)
{
	int shim = argc > 1 && strcmp(argv[1], "shim") == 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	EXPECT(gfp_active() == shim);

	/* malloc */
	void *a = p_malloc(0), *b = p_malloc(0);
	EXPECT(a && b && a != b);
	free(a);
	free(b);
	errno = 0;
	EXPECT(p_malloc(HUGE) == NULL && errno == ENOMEM);
	EXPECT(malloc_usable_size(NULL) == 0);
	char *m = p_malloc(100);
	EXPECT(m && malloc_usable_size(m) >= 100);
	EXPECT(((uintptr_t)m & 15) == 0);

	/* free keeps errno, free(NULL) is nothing */
	errno = 12345;
	p_free(m);
	p_free(NULL);
	EXPECT(errno == 12345);

	/* calloc: overflow, zeroing of reused memory */
	errno = 0;
	EXPECT(p_calloc(too_many_c, 3) == NULL && errno == ENOMEM);
	for (int i = 0; i < 100; i++) {
		char *d = p_malloc(4000);
		memset(d, 0xa5, 4000);
		free(d);
		char *z = p_calloc(1, 4000);
		int zero = 1;
		for (int j = 0; j < 4000; j++)
			zero &= z[j] == 0;
		EXPECT(zero);
		free(z);
	}
	EXPECT(p_calloc(0, 0) != NULL);

	/* realloc */
	char *r = p_realloc(NULL, 10);
	EXPECT(r != NULL);
	memcpy(r, "0123456789", 10);
	r = p_realloc(r, 100000);
	EXPECT(r && memcmp(r, "0123456789", 10) == 0);
	errno = 0;
	char *same = r;
	EXPECT(p_realloc(r, HUGE) == NULL && errno == ENOMEM);
	/* Beyond jemalloc's largest size class it fails before any mmap, and
	 * jemalloc 5.3's realloc sets no errno itself. */
	errno = 0;
	EXPECT(p_realloc(r, SIZE_MAX / 2) == NULL && errno == ENOMEM);
	EXPECT(memcmp(same, "0123456789", 10) == 0); /* the block survives */
	EXPECT(p_realloc(same, 0) == NULL);          /* freed, as glibc does */

	/* reallocarray */
	errno = 0;
	char *ra = reallocarray(NULL, 10, 10);
	EXPECT(ra != NULL);
	static volatile size_t too_many = SIZE_MAX / 2;
	EXPECT(p_reallocarray(ra, too_many, 3) == NULL && errno == ENOMEM);
	ra = p_reallocarray(ra, 20, 10); /* the failed call left it alone */
	EXPECT(ra != NULL);
	free(ra);

	/* posix_memalign: EINVAL for bad alignments, *memptr and errno untouched */
	void *pm = (void *)0x1;
	EXPECT(posix_memalign(&pm, 3, 10) == EINVAL && pm == (void *)0x1);
	EXPECT(posix_memalign(&pm, 4, 10) == EINVAL && pm == (void *)0x1);
	EXPECT(posix_memalign(&pm, 0, 10) == EINVAL && pm == (void *)0x1);
	errno = 777;
	EXPECT(posix_memalign(&pm, 64, HUGE) == ENOMEM && pm == (void *)0x1 && errno == 777);
	EXPECT(posix_memalign(&pm, 4096, 10) == 0 && ((uintptr_t)pm & 4095) == 0);
	free(pm);
	EXPECT(posix_memalign(&pm, 8, 0) == 0 && pm != NULL);
	free(pm);

	/* memalign / aligned_alloc: glibc 2.36 rounds up a non-power-of-two */
	void *ma = memalign(48, 100);
	EXPECT(ma && ((uintptr_t)ma & 63) == 0);
	free(ma);
	ma = aligned_alloc(256, 1000);
	EXPECT(ma && ((uintptr_t)ma & 255) == 0);
	free(ma);
	errno = 0;
	EXPECT(memalign(SIZE_MAX / 2 + 2, 10) == NULL && errno == EINVAL);
	/* ENOMEM set on failure (jemalloc 5.3's own memalign sets none). */
	errno = 0;
	EXPECT(p_memalign(64, HUGE) == NULL && errno == ENOMEM);
	errno = 0;
	EXPECT(p_memalign(64, SIZE_MAX) == NULL && errno == ENOMEM);
	errno = 0;
	EXPECT(p_aligned_alloc(64, SIZE_MAX) == NULL && errno == ENOMEM);

	/* valloc / pvalloc */
	void *v = valloc(100);
	EXPECT(v && ((uintptr_t)v % page) == 0);
	free(v);
	void *pv = pvalloc(page + 1);
	EXPECT(pv && ((uintptr_t)pv % page) == 0 && malloc_usable_size(pv) >= 2 * page);
	free(pv);
	pv = pvalloc(0);
	EXPECT(pv != NULL);
	free(pv);
	errno = 0;
	EXPECT(pvalloc(SIZE_MAX - 10) == NULL && errno == ENOMEM);

	/* the introspection calls answer something sensible */
	struct mallinfo2 before = mallinfo2();
	char *big = p_malloc(8 << 20);
	memset(big, 1, 8 << 20);
	struct mallinfo2 after = mallinfo2();
	/* glibc counts mmapped blocks in hblkhd, jemalloc's answer in uordblks */
	EXPECT(after.uordblks + after.hblkhd >= before.uordblks + before.hblkhd + (8 << 20));
	free(big);
	if (shim) /* glibc may answer 0 when nothing could be trimmed */
		EXPECT(malloc_trim(0) == 1);

	if (failures)
		fprintf(stderr, "%d expectations failed (%s)\n", failures, shim ? "shim" : "plain");
	return failures != 0;
}
