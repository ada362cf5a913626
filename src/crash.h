/*
 * crash.h - crash.c: the fatal-signal record.
 */
#ifndef GFP_CRASH_H
#define GFP_CRASH_H

#pragma GCC visibility push(hidden)

void crash_init(void);

#pragma GCC visibility pop

#endif /* GFP_CRASH_H */
