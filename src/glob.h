/*
 * glob.h - glob.c: the shell patterns of fail.sym/lib/thread and GFP_RULES.
 */
#ifndef GFP_GLOB_H
#define GFP_GLOB_H

#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* fnmatch(pattern, string, 0) in the C locale, byte by byte; never
 * allocates, any context may call it. */
bool glob_match(const char *pattern, const char *string);

#pragma GCC visibility pop

#endif /* GFP_GLOB_H */
