/*
 * init.h - init.c: lazy initialisation, which reads the configuration at
 * the process's first allocation, and the end of the process.
 */
#ifndef GFP_INIT_H
#define GFP_INIT_H

#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* True once the configuration is read; before that every call is passed
 * through untouched (ld.so, libstdc++'s emergency pool). */
bool init_ensure(void);
void init_fini(void);

#pragma GCC visibility pop

#endif /* GFP_INIT_H */
