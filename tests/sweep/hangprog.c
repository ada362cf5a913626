/*
 * hangprog - programs that hang after a failed allocation, for the tests of
 * how gfp-sweep keys a hang (tests/sweep/hang_keys.sh). Each mode is one
 * program; 4 allocations, each from a call site of its own, lead to the
 * same hang:
 *
 *   spin       a busy loop over three functions (spin_outer calls spin_mid,
 *              which calls spin_inner, each doing some of the work): a
 *              sample of the stack is in any of the three
 *   thread     the same in a thread that is not the initial one; main
 *              waits for it
 *   allocspin  a busy loop that reallocates a block between 64 and 128 KiB:
 *              nearly all of its time is in the allocator's realloc
 *   lib PATH   dlopen(PATH) and its hanglib_spin, which allocates and on a
 *              failure spins in the library's own functions
 *   twocalls   no hang: one function makes two allocations and on a failure
 *              of either calls die(), which crashes: one bug, two call
 *              sites in one function (for the stripped copy, whose
 *              functions have no names)
 *   abort      the same, but die_abort() aborts on purpose: its call to
 *              abort is its last instruction
 *
 * Without a failure each prints "ok" and exits 0.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p)  __asm__ volatile("" : : "r"(p) : "memory")

static volatile unsigned long work;

static NOINLINE void busy(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		work = work + i;
}

static NOINLINE void spin_inner(void)
{
	for (unsigned long i = 0; i < 20000; i++)
		work = work * 3 + i;
}

static NOINLINE void spin_mid(void)
{
	for (unsigned long i = 0; i < 20000; i++)
		work = work * 5 + i;
	spin_inner();
}

/* The loop's own code has 3/5 of its time: one sample of the stack is as
 * likely elsewhere as not, twenty all elsewhere about once in 10^8. */
static NOINLINE void spin_outer(void)
{
	for (;;) {
		for (unsigned long i = 0; i < 60000; i++)
			work = work * 7 + i;
		spin_mid();
	}
}

/* realloc alone, one function of the allocator's: every sample but a rare
 * one shares its frame. */
static NOINLINE void alloc_spin(void)
{
	char *p = NULL;
	for (unsigned long i = 0;; i++) {
		char *q = realloc(p, (i & 1 ? 128 : 64) << 10);
		KEEP(q);
		if (q)
			p = q;
	}
}

static void (*hang)(void) = spin_outer;

#define SITE(i)                                                                                    \
	static NOINLINE void *site##i(void)                                                        \
	{                                                                                          \
		void *p = malloc(100 + i);                                                         \
		KEEP(p);                                                                           \
		return p;                                                                          \
	}
SITE(0)
SITE(1)
SITE(2)
SITE(3)

static NOINLINE void *allocate(void *arg)
{
	void *(*const sites[])(void) = {site0, site1, site2, site3};
	(void)arg;
	for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
		void *p = sites[i]();
		if (!p)
			hang();
		free(p);
	}
	return NULL;
}

/* A failure handler that crashes, or one that aborts on purpose. */
static NOINLINE void die(const char *what)
{
	fprintf(stderr, "hangprog: out of memory for %s\n", what);
	*(volatile int *)(uintptr_t)what[32] = 1;
}

static NOINLINE void die_abort(const char *what)
{
	fprintf(stderr, "hangprog: out of memory for %s\n", what);
	abort();
}

static void (*fail)(const char *) = die;

static NOINLINE void two_calls(void)
{
	char *a = malloc(300);
	if (!a)
		fail("a");
	busy(10);
	char *b = malloc(400);
	if (!b)
		fail("b");
	KEEP(a);
	KEEP(b);
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";
	if (strcmp(mode, "allocspin") == 0)
		hang = alloc_spin;
	if (strcmp(mode, "thread") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, allocate, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 2;
	} else if (strcmp(mode, "lib") == 0 && argc > 2) {
		void *lib = dlopen(argv[2], RTLD_NOW);
		void (*fn)(void) = NULL;
		if (lib) /* POSIX's way to a function's address from dlsym */
			*(void **)&fn = dlsym(lib, "hanglib_spin");
		if (!fn) {
			fprintf(stderr, "hangprog: %s\n", dlerror());
			return 2;
		}
		fn();
	} else if (strcmp(mode, "twocalls") == 0 || strcmp(mode, "abort") == 0) {
		if (strcmp(mode, "abort") == 0)
			fail = die_abort;
		two_calls();
	} else {
		allocate(NULL);
	}
	puts("ok");
	return 0;
}
