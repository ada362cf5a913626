/*
 * context.h - context.c: current_gfp_context(): explicit flags, default, scopes.
 */
#ifndef GFP_CONTEXT_H
#define GFP_CONTEXT_H

#include "types.h"

#pragma GCC visibility push(hidden)

gfp_t context_of(gfp_t explicit_flags);
/* A request's context: its flags, else a rule's, else default=; worked out
 * the first time something asks, and kept in req->gfp. */
gfp_t context_resolve(struct gfp_req *req);
unsigned context_scope_push(gfp_t flags);
void context_scope_pop(unsigned cookie);

#pragma GCC visibility pop

#endif /* GFP_CONTEXT_H */
