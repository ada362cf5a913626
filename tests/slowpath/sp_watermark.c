/*
 * sp_watermark - how much of the budget's reserve each kind of request may
 * take. Fills the budget with 4096-byte NORETRY|NOWARN requests of each kind
 * in turn and prints how many blocks each one added:
 *   kernel=N nowait=N nomemalloc=N high=N atomic_nomem=N atomic=N memalloc=N
 * (run under a policy with limit=; the shell test compares with min_free).
 */
#include "sp_common.h"

int main(void)
{
	const gfp_t q = GFP_NORETRY | GFP_NOWARN;

	if (!gfp_active())
		sp_die("the shim is not loaded\n");
	int kernel = sp_fill(4096, GFP_KERNEL | q);
	int nowait = sp_fill(4096, GFP_NOWAIT | GFP_NOWARN);
	int nomem = sp_fill(4096, GFP_KERNEL | GFP_MEMALLOC | GFP_NOMEMALLOC | q);
	int high = sp_fill(4096, GFP_KERNEL | GFP_HIGH | q);
	/* NOMEMALLOC: no ALLOC_NON_BLOCK quarter, HIGH's half only. */
	int atomic_nomem = sp_fill(4096, GFP_ATOMIC | GFP_NOMEMALLOC | GFP_NOWARN);
	int atomic = sp_fill(4096, GFP_ATOMIC | GFP_NOWARN);
	int memalloc = sp_fill(4096, GFP_KERNEL | GFP_MEMALLOC | q);
	int after = sp_fill(4096, GFP_KERNEL | GFP_MEMALLOC | q);

	sp_out(1,
	       "kernel=%d nowait=%d nomemalloc=%d high=%d atomic_nomem=%d atomic=%d memalloc=%d "
	       "after=%d\n",
	       kernel, nowait, nomem, high, atomic_nomem, atomic, memalloc, after);
	return 0;
}
