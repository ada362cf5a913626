/*
 * thread_life.h - thread_life.c: a thread's start (its mode decided, its
 * registration) and its exit, as every module sees them.
 */
#ifndef GFP_THREAD_LIFE_H
#define GFP_THREAD_LIFE_H

#include <stdbool.h>

#include "thread.h"

#pragma GCC visibility push(hidden)

/* Decides the calling thread's mode; returns it. */
enum gfp_tls_mode thread_enter(bool may_register);
/* Whether thread_enter registers a new thread in this process. */
bool thread_registers(void);
/* The pthread key whose destructor ends a registered thread (init.c). */
void thread_life_init(void);
/* fork.c, in the child: instead of thread_atfork_child, which it calls. */
void thread_life_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_THREAD_LIFE_H */
