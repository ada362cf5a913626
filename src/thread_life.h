/*
 * thread_life.h - thread_life.c: a thread's start (its mode decided, its
 * registration) and its exit, as every module sees them.
 */
#ifndef GFP_THREAD_LIFE_H
#define GFP_THREAD_LIFE_H

#include <stdbool.h>

#include "thread.h"

#pragma GCC visibility push(hidden)

/* Decides the calling thread's mode; returns it. GFP_TLS_UNDECIDED while
 * the configuration is not read: a call that may be the process's first
 * reads it before (init_ensure). */
enum gfp_tls_mode thread_enter(bool may_register);
/* Whether thread_enter registers a new thread in this process (the
 * configuration read). */
bool thread_registers(void);
/* The pthread key whose destructor ends a registered thread (init.c). */
void thread_life_init(void);
/* fork.c, in the child: instead of thread_atfork_child, which it calls. */
void thread_life_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_THREAD_LIFE_H */
