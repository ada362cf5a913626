/*
 * reserve_take.h - reserve_take.c: gfp_reserve().
 */
#ifndef GFP_RESERVE_TAKE_H
#define GFP_RESERVE_TAKE_H

#include <stddef.h>

#include "policy.h"

#pragma GCC visibility push(hidden)

/* 0, or -1 with errno ENOMEM; as without the shim where no policy counts. */
int reserve_take(size_t bytes, gfp_t flags);

#pragma GCC visibility pop

#endif /* GFP_RESERVE_TAKE_H */
