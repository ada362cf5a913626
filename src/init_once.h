/*
 * init_once.h - init_once.c: the lock that orders the first reading of the
 * configuration (init.c), across a fork (fork.c), and its outcome.
 */
#ifndef GFP_INIT_ONCE_H
#define GFP_INIT_ONCE_H

#include <stdbool.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

enum { INIT_NONE, INIT_DONE };
extern int init_state; /* atomic: INIT_DONE once the configuration is read */
/* The process that read the configuration (a fork's child inherits it). */
extern pid_t init_pid;

/* Taken with the guard already up (init_ensure raises it). */
void init_once_lock(void);
void init_once_unlock(void);
/* Whether the configuration was read, once a reading under way ends. */
bool init_once_wait(void);
/* fork.c's handlers. */
void init_atfork_prepare(void);
void init_atfork_parent(void);
void init_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_INIT_ONCE_H */
