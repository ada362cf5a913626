/*
 * fork.h - fork.c: the fork handlers.
 */
#ifndef GFP_FORK_H
#define GFP_FORK_H

#pragma GCC visibility push(hidden)

void fork_handlers_install(void);

#pragma GCC visibility pop

#endif /* GFP_FORK_H */
