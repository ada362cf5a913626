/*
 * start.c - where the program and the library are in their lives: the
 * library's constructor and destructor, and the libc functions the shim
 * wraps to know where the program is: __libc_start_main (main has started:
 * failures before it are not the program's), pthread_create (each thread's
 * creation order, from which its random generator is seeded, so that a seed
 * reproduces with threads) and _exit (the process ends without exit's
 * destructors: its report is written and a member of a tree leaves it all
 * the same).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "fastpath.h"
#include "routes.h"

#define EXPORT __attribute__((visibility("default")))

/* The first of the library's constructors (preload/meson.build lists this
 * file first for it). */
/* Initialisation is lazy (the first allocation does it); this makes sure a
 * program that never allocates before main still gets its configuration
 * checked before main, and chooses the routes once the policy is known. */
__attribute__((constructor(101))) static void gfpshim_ctor(void)
{
	if (init_ensure()) {
		routes_start();
		tree_export_env(); /* GFP_TREE for the children */
	}
}

__attribute__((destructor(101))) static void gfpshim_dtor(void)
{
	init_fini();
}

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
                             void *);
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static main_fn real_main;

static int main_wrapper(int argc, char **argv, char **envp)
{
	__atomic_store_n(&gfp_main_started, true, __ATOMIC_RELEASE);
	if (init_ensure())
		ctl_start(); /* ctl=1: the program is past its start-up */
	return real_main(argc, argv, envp);
}

static void *next_symbol(const char *name)
{
	gfp_tls.guard++; /* dlsym allocates its error state */
	void *sym = dlsym(RTLD_NEXT, name);
	gfp_tls.guard--;
	return sym;
}

EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	start_main_fn real;
	void *sym = next_symbol("__libc_start_main");
	__builtin_memcpy(&real, &sym, sizeof(real));
	real_main = main;
	return real(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

struct trampoline {
	void *(*start)(void *);
	void *arg;
	uint64_t ordinal;
	bool enter; /* decide the thread's mode now, not at its first failure */
};

static void *thread_start(void *p)
{
	struct trampoline t = *(struct trampoline *)p;
	dallocx(p, 0);
	gfp_tls.inject.ordinal = t.ordinal;
	if (t.enter && gfp_tls.mode == GFP_TLS_UNDECIDED)
		thread_enter(true);
	return t.start(t.arg);
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                          void *arg)
{
	static create_fn real;
	if (!real) {
		void *sym = next_symbol("pthread_create");
		__builtin_memcpy(&real, &sym, sizeof(real));
	}
	/* A thread the policy registers is registered as it starts: one that
	 * only frees must still give its bytes back to the budget, and frees
	 * never register (thread_enter). Watched allocations (preload/malloc.c)
	 * would meet the engine only when they fail, when registering the
	 * thread - its exit key, its reserve - may itself fail. */
	bool enter = init_ensure() && thread_registers();
	if (!gfp_meaning.inject && !enter)
		return real(thread, attr, start, arg);
	struct trampoline *t = mallocx(sizeof(*t), 0);
	if (!t)
		return real(thread, attr, start, arg);
	t->start = start;
	t->arg = arg;
	/* The child's ordinal: its parent's and its place among the siblings. */
	t->ordinal = gfp_meaning.inject ? inject_child_ordinal() : 0;
	t->enter = enter;
	int r = real(thread, attr, thread_start, t);
	if (r != 0)
		dallocx(t, 0);
	return r;
}

/* glibc's exit() ends in its own _exit, not this one: only the program's
 * calls come here. What glibc's does after: exit_group. */
EXPORT void _exit(int status)
{
	init_fini_exit();
	if (gfp_tree_on)
		tree_exit();
	for (;;)
		syscall(SYS_exit_group, status);
}

EXPORT void _Exit(int status)
{
	_exit(status);
}
