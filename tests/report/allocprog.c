/*
 * allocprog - a known allocation pattern for the allocinfo test of
 * gfp-report (stats=sites): every site's calls and live blocks are fixed in
 * advance, also those of threads. The script finds the lines by their SITE:
 * markers, not by number.
 *
 *   keep     100 x malloc(1000), all kept (usable size 1024)
 *   temp     1000 x malloc(100), each freed at once; by main and by each of
 *            the 4 threads
 *   handoff  25 x malloc(3000) in each thread (usable size 3072), freed by
 *            main after the join: the even ones, the odd 12 stay
 *   strdup   one from main, then one from label, both kept: each site is
 *            the caller's call, not libc's (whose return address they share)
 *   grow     one block reallocated through 8, 100, 5000, 70000, 600000 and
 *            40 bytes (moved, grown in place, shrunk), kept (usable 48)
 *   big      2 x malloc(600000), the first freed (usable 655360: beyond what
 *            the shadow map's entry holds)
 *   tiny     10 x malloc(5), the even ones freed (usable 8: the smallest
 *            class, whose neighbour granule is another block's)
 *   aligned  10 x posix_memalign(64, 100), the even ones freed (usable 128)
 *   unknown_error  strerror(12345) in each thread: glibc keeps the text in
 *            the thread and frees it after the shim has let the thread go
 *            (__libc_thread_freeres), so none stays live
 *   late_block  malloc(4000) in each thread, reallocated and freed by a key
 *            destructor's third round, after the shim let the thread go:
 *            none stays live
 *
 * Prints the usable sizes it got, so that a failing check shows them.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define NKEEP    100
#define NTEMP    1000
#define NHAND    25

static void *kept[NKEEP];
static void *handed[NTHREADS][NHAND];
static char *title, *name;

/* Exported (the project builds with -fvisibility=hidden): the report's
 * rows name them by dladdr, and the test finds the rows by name. */
#define EXPORT __attribute__((noinline, visibility("default")))

EXPORT void keep(void)
{
	for (int i = 0; i < NKEEP; i++)
		kept[i] = malloc(1000); /* SITE:keep */
}

EXPORT int temp(void)
{
	int got = 0;
	for (int i = 0; i < NTEMP; i++) {
		char *volatile p = malloc(100); /* SITE:temp */
		got += p != NULL;
		free(p);
	}
	return got;
}

EXPORT char *label(void)
{
	return strdup("label"); /* SITE:label */
}

EXPORT void handoff(void **out)
{
	for (int i = 0; i < NHAND; i++)
		out[i] = malloc(3000); /* SITE:handoff */
}

EXPORT void *grow(void)
{
	static const size_t sizes[] = {8, 100, 5000, 70000, 600000, 40};
	void *p = NULL;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *q = realloc(p, sizes[i]); /* SITE:grow */
		if (!q) {
			free(p);
			return NULL;
		}
		p = q;
	}
	return p;
}

EXPORT void *big(void)
{
	return malloc(600000); /* SITE:big */
}

EXPORT void *tiny(void)
{
	return malloc(5); /* SITE:tiny */
}

EXPORT void *aligned(void)
{
	void *p = NULL;
	return posix_memalign(&p, 64, 100) == 0 ? p : NULL; /* SITE:aligned */
}

EXPORT const char *unknown_error(void)
{
	return strerror(12345); /* SITE:unknown_error */
}

EXPORT void *late_block(void)
{
	return malloc(4000); /* SITE:late_block */
}

static pthread_key_t late_key;

/* Runs in three rounds of key destructors; the last is past the shim's. */
static void late_free(void *block)
{
	static __thread int rounds;
	if (++rounds < 3) {
		pthread_setspecific(late_key, block);
		return;
	}
	free(realloc(block, 100));
}

static void *worker(void *arg)
{
	if (temp() != NTEMP || !unknown_error())
		return arg;
	void *late = late_block();
	if (!late)
		return arg;
	pthread_setspecific(late_key, late);
	handoff(arg);
	return NULL;
}

int main(void)
{
	keep();
	pthread_key_create(&late_key, late_free);
	int ok = temp() == NTEMP;
	title = strdup("allocinfo test"); /* SITE:strdup */
	name = label();
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, handed[i]) != 0) {
			fputs("allocprog: pthread_create failed\n", stderr);
			return 1;
		}
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		ok &= r == NULL;
	}
	for (int i = 0; i < NKEEP; i++)
		ok &= kept[i] != NULL;
	for (int i = 0; i < NTHREADS; i++)
		for (int j = 0; j < NHAND; j++) {
			ok &= handed[i][j] != NULL;
			if (j % 2 == 0)
				free(handed[i][j]);
		}
	void *grown = grow(), *bigs[2] = {big(), big()}, *tinies[10], *aligneds[10];
	ok &= grown && bigs[0] && bigs[1];
	free(bigs[0]);
	for (int i = 0; i < 10; i++) {
		tinies[i] = tiny();
		aligneds[i] = aligned();
		ok &= tinies[i] && aligneds[i];
	}
	for (int i = 0; i < 10; i += 2) {
		free(tinies[i]);
		free(aligneds[i]);
	}
	if (!ok || !title || !name) {
		fputs("allocprog: out of memory\n", stderr);
		return 1;
	}
	printf("usable keep %zu handoff %zu strdup %zu grow %zu big %zu tiny %zu aligned %zu\n",
	       malloc_usable_size(kept[0]), malloc_usable_size(handed[0][1]),
	       malloc_usable_size(title), malloc_usable_size(grown), malloc_usable_size(bigs[1]),
	       malloc_usable_size(tinies[1]), malloc_usable_size(aligneds[1]));
	return 0;
}
