/*
 * compat.h - compat.c: glibc malloc settings that jemalloc ignores.
 */
#ifndef GFP_COMPAT_H
#define GFP_COMPAT_H

#pragma GCC visibility push(hidden)

void compat_warn_glibc_env(void);

#pragma GCC visibility pop

#endif /* GFP_COMPAT_H */
