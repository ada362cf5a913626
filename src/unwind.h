/*
 * unwind.h - unwind.c: backtraces (through unwind_gate.h's gate).
 */
#ifndef GFP_UNWIND_H
#define GFP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "types.h"
#include "unwind_gate.h"

#pragma GCC visibility push(hidden)

void unwind_init(void);
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
