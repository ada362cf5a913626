/*
 * internal.h - the umbrella over the engine's headers, in dependency order,
 * so that a file may include it alone; a file may as well include just the
 * headers it needs. Each header is named after the .c file that defines
 * what it declares (types.h: the shared types; policy.h: the policy
 * library; meaning.h: what the policy means; profile.h, fastpath.h,
 * route.h: the routes' inlines, not included here). For .c files only: a
 * header includes the headers it uses, never this one.
 *
 * Every header declares inside "#pragma GCC visibility push(hidden)": each
 * name is of libgfpshim.so itself, so the compiler reaches it PC-relative
 * rather than through the GOT (the idle malloc jumps through gfp_je_malloc
 * in one instruction, not two). Nothing here is exported.
 */
#ifndef GFP_INTERNAL_H
#define GFP_INTERNAL_H

#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <sys/types.h>

#include "gfpshim.h"

#include "types.h"
#include "clock.h"
#include "policy.h"
#include "meaning.h"
#include "glob.h"
#include "log.h"
#include "dest.h"
#include "backend.h"
#include "init.h"
#include "init_exit.h"
#include "thread.h"
#include "thread_life.h"
#include "context.h"
#include "ctl.h"
#include "profile_api.h"
#include "rules.h"
#include "budget.h"
#include "tree.h"
#include "reserve.h"
#include "reclaim.h"
#include "oom.h"
#include "canary.h"
#include "unwind.h"
#include "slowpath.h"
#include "site.h"
#include "inject.h"
#include "records.h"
#include "crash.h"
#include "stats.h"
#include "compat.h"

#endif /* GFP_INTERNAL_H */
