/*
 * unwind_gate.h - unwind_gate.c: the gate around every use of libunwind.
 */
#ifndef GFP_UNWIND_GATE_H
#define GFP_UNWIND_GATE_H

#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* libunwind's state, set up at the first backtrace: false when this one
 * must go without (a signal handler inside the setup, a child forked from
 * inside it). Before unwind_enter, never with a lock of the shim's held. */
bool unwind_setup(void);
void unwind_setup_atfork_prepare(void);
void unwind_setup_atfork_child(void);
/* Around every use of libunwind: a fork waits until no other thread is
 * inside it (libunwind has no fork handlers: a child forked while another
 * thread held its memory pool's lock waited for ever at its first unwind),
 * and no thread enters while a fork waits. A nested entry never waits. */
void unwind_enter(void);
void unwind_leave(void);
void unwind_atfork_prepare(void);
void unwind_atfork_parent(void);
void unwind_atfork_child(void);

#pragma GCC visibility pop

#endif /* GFP_UNWIND_GATE_H */
