/*
 * log.h - log.c: every message the shim prints, one write(2) each.
 */
#ifndef GFP_LOG_H
#define GFP_LOG_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

enum gfp_level { GFP_LOG_ERROR, GFP_LOG_WARNING, GFP_LOG_INFO };
/* 0, or -1 with a message in `err` for a bad GFP_LOG value. */
int log_set_dest(const char *dest, bool secure, char *err, size_t errlen);
void gfp_log(enum gfp_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gfp_log_raw(const char *p, size_t n);
/* Whether messages go to a file or descriptor of the user's (GFP_LOG),
 * not into the program's own stdout or stderr. */
bool gfp_log_private(void);

#pragma GCC visibility pop

#endif /* GFP_LOG_H */
