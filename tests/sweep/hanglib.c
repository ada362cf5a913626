/*
 * hanglib - a library whose function allocates and, on a failure, spins in
 * the library's own code: hangprog's "lib" mode loads it through a symlink,
 * so that the loader's name for it is not its file's.
 */
#include <stdlib.h>

void hanglib_spin(void);

static volatile unsigned long work;

static __attribute__((noinline)) void lib_loop(void)
{
	for (;;)
		for (unsigned long i = 0; i < 100000; i++)
			work = work * 7 + i;
}

__attribute__((visibility("default"))) void hanglib_spin(void)
{
	void *p = malloc(200);
	__asm__ volatile("" : : "r"(p) : "memory");
	if (!p)
		lib_loop();
	free(p);
}
