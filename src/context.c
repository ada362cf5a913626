/*
 * context.c - which gfp flags a request carries: current_gfp_context().
 *
 * Most specific first: the caller's explicit flags (gfp_malloc), else the
 * flags of the first GFP_RULES rule that matches (rules.c), else the
 * process default (default=); then the thread's scopes restrict the result
 * the way PF_MEMALLOC_NOFS/NOIO do (decide.c: decide_scope_apply, where a
 * NOFAIL request keeps its right to wait inside a NOWAIT scope). Scopes
 * live in one thread-local word:
 * a set bit among IO, FS and DIRECT_RECLAIM means "taken away", any other
 * set bit is a modifier the scope adds. push returns only the bits it set and
 * pop clears exactly those, so LIFO nesting is exact without a stack
 * (memalloc_flags_save).
 */
#include "meaning.h"
#include "thread.h"
#include "context.h"
#include "rules.h"
#include "decide.h"

static gfp_t scoped(gfp_t f)
{
	return decide_scope_apply(f, gfp_tls.scope);
}

gfp_t context_of(gfp_t explicit_flags)
{
	return scoped(explicit_flags ? explicit_flags : gfp_policy.default_flags);
}

static gfp_t context_of_req(const struct gfp_req *req)
{
	gfp_t f = req->gfp;
	if (!f && gfp_rules_on)
		f = rules_flags(req);
	return scoped(f ? f : gfp_policy.default_flags);
}

unsigned context_scope_push(gfp_t flags)
{
	unsigned bits = decide_scope_bits(flags) & ~gfp_tls.scope; /* only what this push adds */
	gfp_tls.scope |= bits;
	return bits;
}

void context_scope_pop(unsigned cookie)
{
	gfp_tls.scope &= ~cookie;
}

gfp_t context_resolve(struct gfp_req *req)
{
	if (!req->ctx_resolved) {
		req->gfp = context_of_req(req);
		req->ctx_resolved = true;
	}
	return req->gfp;
}
