/*
 * init.h - init.c: lazy initialisation, the global state, fork handlers, and
 * the derivation and checks of a policy (also of one gfp-ctl sets).
 */
#ifndef GFP_INIT_H
#define GFP_INIT_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

#pragma GCC visibility push(hidden)

extern bool gfp_secure;
/* True once the configuration is read; before that every call is passed
 * through untouched (ld.so, libstdc++'s emergency pool). */
bool gfp_init(void);
/* GFP_STRICT: a bad setting exits 125 (true, the default) or warns. */
bool gfp_config_strict(void);
void gfp_fini(void);
/* The program's own _exit: the process that read the configuration writes
 * its report as exit would (dash and daemons end so); a fork's or vfork's
 * child, which read none, writes nothing. */
void gfp_fini_exit(void);

#pragma GCC visibility pop

#endif /* GFP_INIT_H */
