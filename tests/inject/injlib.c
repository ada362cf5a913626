/*
 * libinjlib.so - a shared library that allocates for inj_stack, so that the
 * fail.lib and fail.reject.lib filters have a module of their own to match.
 */
#include <stdlib.h>

__attribute__((visibility("default"))) void *injlib_alloc(size_t size);
extern void *volatile injlib_sink;
void *volatile injlib_sink;

/* Not static, not inlined, no tail call: the frame and its symbol stay. */
__attribute__((noinline, visibility("default"))) void *injlib_alloc(size_t size)
{
	void *p = malloc(size);

	injlib_sink = p;
	return p;
}
