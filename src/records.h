/*
 * records.h - records.c: GFP_RECORD, one JSON line per event. (The tools'
 * reader of these lines is tools/lib/records.h.)
 */
#ifndef GFP_RECORDS_H
#define GFP_RECORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "types.h"

#pragma GCC visibility push(hidden)

int records_set_dest(const char *dest, bool secure, char *err, size_t errlen);
bool records_on(void);
void record_event(const char *event, const struct gfp_req *req, const struct gfp_frame *frames,
                  int n, const char *extra);
/* A record of a few fields and no frames, on a 256-byte stack buffer (from
 * a signal handler that may be short of stack). */
void record_short(const char *event, const char *extra);

#pragma GCC visibility pop

#endif /* GFP_RECORDS_H */
