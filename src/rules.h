/*
 * rules.h - rules.c: GFP_RULES.
 */
#ifndef GFP_RULES_H
#define GFP_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "types.h"

#pragma GCC visibility push(hidden)

extern bool gfp_rules_on;
int rules_init(const char *text, char *err, size_t errlen);
const char *rules_text(void);
gfp_t rules_flags(const struct gfp_req *req);

#pragma GCC visibility pop

#endif /* GFP_RULES_H */
