/*
 * pool_first - does a prefaulted reservation in reserve.mode=tokens serve its
 * thread's requests first (doc/budget.md, Reservations: "with tokens, first")?
 *
 * Takes gfp_reserve(1 MiB), then makes one request of each kind (malloc,
 * calloc, aligned_alloc, posix_memalign) and prints how many came from an
 * arena other than the one that served the thread before the reservation
 * (the prefaulted pool's arena): "pool=N/4".
 */
#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "gfpshim.h"

static unsigned arena_of(void *p)
{
	unsigned ind = ~0u;
	size_t sz = sizeof(ind);
	if (mallctl("arenas.lookup", &ind, &sz, &p, sizeof(p)) != 0)
		return ~0u;
	return ind;
}

int main(void)
{
	void *before = malloc(1000);
	unsigned home = arena_of(before);
	if (gfp_reserve(1 << 20, GFP_KERNEL) != 0) {
		printf("gfp_reserve failed\n");
		return 1;
	}
	void *p[4] = {malloc(1000), calloc(1, 2000), aligned_alloc(64, 3008), NULL};
	if (posix_memalign(&p[3], 64, 4000) != 0)
		p[3] = NULL;
	int pool = 0;
	for (int i = 0; i < 4; i++) {
		if (!p[i]) {
			printf("request %d failed\n", i);
			return 1;
		}
		pool += arena_of(p[i]) != home;
	}
	gfp_unreserve();
	printf("pool=%d/4\n", pool);
	for (int i = 0; i < 4; i++)
		free(p[i]);
	free(before);
	return 0;
}
