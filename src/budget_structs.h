/*
 * budget_structs.h - budget.c's part of the thread-local state (gfp_tls.budget,
 * thread.h), apart from budget.h so that thread.h can embed it.
 */
#ifndef GFP_BUDGET_STRUCTS_H
#define GFP_BUDGET_STRUCTS_H

#include <stdint.h>

/* What the thread may still charge before the budget looks again
 * (gfp_allowance_take), granted at generation allowance_gen. gfp_tls keeps
 * it right after the countdown: the budget routes' subq reaches it at a
 * fixed offset from %fs. */
struct gfp_tls_budget {
	int64_t allowance;
	uint64_t allowance_gen;
};

#endif /* GFP_BUDGET_STRUCTS_H */
