/*
 * dlopen_plugin.c - a C program (no libstdc++ of its own) that dlopens a C++
 * plugin with RTLD_NOW | RTLD_LOCAL and runs it. Under the shim, the
 * plugin's operator new must be the shim's, not libstdc++'s or
 * libjemalloc's: dlopen_plugin.sh checks the GFP_REPORT.
 *
 * usage: dlopen_plugin PLUGIN.so N
 * Prints "plugin_run(N) = M" and the file defining the plugin's operator
 * new; exits 0 if M == N.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s PLUGIN.so N\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[2]);
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	int (*run)(int);
	const char *(*owner)(void);
	/* The POSIX way around ISO C's object/function pointer rule. */
	*(void **)&run = dlsym(h, "plugin_run");
	*(void **)&owner = dlsym(h, "plugin_new_owner");
	if (!run || !owner) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	int got = run(n);
	printf("plugin_run(%d) = %d\n", n, got);
	printf("operator new from %s\n", owner());
	if (dlclose(h) != 0) {
		fprintf(stderr, "dlclose: %s\n", dlerror());
		return 1;
	}
	return got == n ? 0 : 1;
}
