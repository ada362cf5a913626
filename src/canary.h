/*
 * canary.h - canary.c: canary, failure report, misuse warnings.
 */
#ifndef GFP_CANARY_H
#define GFP_CANARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#pragma GCC visibility push(hidden)

/* The page order of a request of `size` bytes (the kernel's get_order). */
unsigned canary_order(size_t size);
void canary_tick(struct gfp_slow *s);
void canary_warn(const struct gfp_slow *s);
void canary_warn_alloc(const struct gfp_slow *s, const char *reason);
/* "1 round", "5 rounds": for the messages that count them. */
const char *canary_rounds(unsigned rounds, char *buf, size_t n);
bool canary_oom_report_ok(unsigned *missed);
void canary_misuse(const struct gfp_slow *s, bool in_reclaim, bool scope_waived);

#pragma GCC visibility pop

#endif /* GFP_CANARY_H */
