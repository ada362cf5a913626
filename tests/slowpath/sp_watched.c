/*
 * sp_watched - a waiting malloc is woken by another thread's memory coming
 * back, also when the program's allocations are watched (a policy that only
 * shapes failures: they meet the shim only when jemalloc fails).
 *
 *   sp_watched realloc        the other thread shrinks a 6 MiB block with
 *                             realloc (no free at all)
 *   sp_watched first-failure  none of the other thread's calls reaches the
 *                             shim (a watched malloc that jemalloc serves)
 *                             until a failing one, after the address space is
 *                             spent to the last page; later it frees. The
 *                             shim must have registered it as it started.
 *
 * Under RLIMIT_AS, with the address space filled, main mallocs 1 MiB (KERNEL,
 * below costly=2M: it loops) and the other thread gives memory back 200 ms
 * later. Prints "result=ok|null after_give_back=1|0 waited_ms=T":
 * after_give_back says whether the other thread had begun to give memory
 * back when the malloc returned (it waited for it). With a long wait=, a
 * waiter that nobody wakes does not return.
 */
#include <jemalloc/jemalloc.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "sp_common.h"

static void *big;
static atomic_int stage, giving_back;
static int first_failure;

static void wait_stage(int s)
{
	while (atomic_load(&stage) != s)
		sp_sleep_ms(1);
}

/* Both threads in one arena, so that what one gives back the other can use. */
static void arena0(void)
{
	unsigned a = 0;
	mallctl("thread.arena", NULL, NULL, &a, sizeof(a));
}

static void *other(void *arg)
{
	(void)arg;
	arena0();
	big = sp_malloc_fn(6 << 20);
	atomic_store(&stage, 1);
	if (first_failure) {
		wait_stage(2);
		unsigned c = gfp_scope_push(GFP_NORETRY);
		void *p = sp_malloc_fn(1 << 20); /* fails, at the last page */
		gfp_scope_pop(c);
		if (p)
			sp_die("the failing malloc succeeded\n");
		atomic_store(&stage, 3);
	}
	wait_stage(4);
	sp_sleep_ms(200);
	atomic_store(&giving_back, 1);
	if (first_failure)
		free(big);
	else if (realloc(big, 4096) == NULL)
		sp_die("the shrinking realloc failed\n");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "realloc") && strcmp(argv[1], "first-failure")))
		sp_die("usage: sp_watched realloc|first-failure\n");
	first_failure = !strcmp(argv[1], "first-failure");
	arena0();
	pthread_t t;
	if (pthread_create(&t, NULL, other, NULL))
		sp_die("pthread_create failed\n");
	wait_stage(1);

	struct rlimit rl = {512 << 20, 512 << 20};
	if (setrlimit(RLIMIT_AS, &rl))
		sp_die("setrlimit failed\n");
	unsigned c = gfp_scope_push(GFP_NORETRY);
	while (sp_malloc_fn(1 << 20))
		;
	while (sp_malloc_fn(64 << 10))
		;
	gfp_scope_pop(c);
	if (first_failure) {
		while (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		            0) != MAP_FAILED)
			;
		atomic_store(&stage, 2);
		wait_stage(3);
	}

	double t0 = sp_now_ms();
	atomic_store(&stage, 4);
	void *p = sp_malloc_fn(1 << 20);
	int after = atomic_load(&giving_back);
	printf("result=%s after_give_back=%d waited_ms=%.0f\n", p ? "ok" : "null", after,
	       sp_now_ms() - t0);
	pthread_join(t, NULL);
	return 0;
}
