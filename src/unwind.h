/*
 * unwind.h - unwind.c: backtraces.
 */
#ifndef GFP_UNWIND_H
#define GFP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "types.h"

#pragma GCC visibility push(hidden)

void unwind_init(void);
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
int unwind_capture(struct gfp_frame *frames, int max);
/* From a signal handler: the frames of the interrupted code. */
int unwind_capture_signal(struct gfp_frame *frames, int max);
void unwind_format(struct gfp_buf *b, const struct gfp_frame *frames, int n);
/* One return address named as a backtrace names it. */
void unwind_name(struct gfp_frame *f, uintptr_t ip);
/* `buf` holds module+offset when the caller has no name. */
const char *unwind_caller(const struct gfp_frame *frames, int n, char *buf, size_t size);
/* Whether a frame's function name (or, with `module`, its module) matches
 * the glob; frames without a name match nothing. */
bool unwind_any_frame(const struct gfp_frame *frames, int n, const char *glob, bool module);

#pragma GCC visibility pop

#endif /* GFP_UNWIND_H */
