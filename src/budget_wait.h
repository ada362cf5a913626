/*
 * budget_wait.h - budget_wait.c: the wait queue of requests that wait for
 * memory.
 */
#ifndef GFP_BUDGET_WAIT_H
#define GFP_BUDGET_WAIT_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Once, at the budget's first start-up. */
void budget_wait_init(void);
/* The frees' generation now: budget_wait sleeps until it moves. */
uint64_t budget_wait_gen(void);
/* Called after a free under a policy when someone waits (gfp_waiters). */
void budget_wait_wake(void);
/* Sleeps up to `ms`, or until a free after generation `seen`. */
void budget_wait(uint64_t seen, uint64_t ms);
void budget_wait_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_BUDGET_WAIT_H */
