/*
 * sp_shrink - shrinker kinds, the context they are called with, and scopes.
 *
 * Run under GFP_POLICY='limit=8M;default=KERNEL|NORETRY;wait=5ms;retries=4;
 * oom=fail;nofs_fail=1'. Three caches (kinds NONE, IO, FS) own blocks inside
 * the budget; the budget is then filled completely. Each request below runs
 * under that pressure and the test checks which shrinkers its reclaim called
 * and with which ctx. Prints "ok - ..." / "not ok - ..." lines; exit 1 on
 * any failure.
 */
#include "sp_common.h"

#define NCACHE       3
#define CACHE_BLOCKS 48

struct cache {
	const char *name;
	unsigned kind;
	int freeing; /* free blocks when called, else only record */
	int n;
	void *blk[CACHE_BLOCKS];
	int calls;
	gfp_t ctx;      /* ctx of the first call since the reset */
	int ctx_varied; /* a later call had another ctx */
	size_t min_want;
};

static struct cache caches[NCACHE] = {
    {.name = "NONE", .kind = GFP_SHRINK_NONE},
    {.name = "IO", .kind = GFP_SHRINK_IO},
    {.name = "FS", .kind = GFP_SHRINK_FS},
};

static int failures;

static size_t scan(void *arg, size_t want, gfp_t ctx)
{
	struct cache *c = arg;
	size_t bytes = 0;

	if (c->calls == 0)
		c->ctx = ctx;
	else if (ctx != c->ctx)
		c->ctx_varied = 1;
	if (c->calls == 0 || want < c->min_want)
		c->min_want = want;
	c->calls++;
	if (!c->freeing)
		return 0;
	while (c->n > 0 && (bytes == 0 || bytes < want)) {
		void *p = c->blk[--c->n];
		bytes += malloc_usable_size(p);
		free(p);
	}
	return bytes;
}

static void reset(int freeing_mask)
{
	for (int i = 0; i < NCACHE; i++) {
		caches[i].calls = 0;
		caches[i].ctx = 0;
		caches[i].ctx_varied = 0;
		caches[i].min_want = 0;
		caches[i].freeing = (freeing_mask >> i) & 1;
	}
}

static __attribute__((format(printf, 2, 3))) void check(int ok, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sp_out(1, "%s - %s\n", ok ? "ok" : "not ok", buf);
	if (!ok)
		failures++;
}

/* Checks that exactly the caches in @mask (bit 0 NONE, 1 IO, 2 FS) were
 * called, each with ctx @ctx; @once: each exactly once. */
static void expect_called(const char *what, int mask, gfp_t ctx, int once)
{
	char got[128] = "";
	int ok = 1;

	for (int i = 0; i < NCACHE; i++) {
		struct cache *c = &caches[i];
		int called = c->calls > 0;

		snprintf(got + strlen(got), sizeof(got) - strlen(got), " %s:%d/0x%x", c->name,
		         c->calls, c->ctx);
		if (called != ((mask >> i) & 1))
			ok = 0;
		if (called && (c->ctx != ctx || c->ctx_varied))
			ok = 0;
		if (called && once && c->calls != 1)
			ok = 0;
		if (called && c->min_want == 0)
			ok = 0;
	}
	check(ok, "%s: shrinkers called (calls/ctx):%s; expected %s%s%s%s with ctx 0x%x%s", what,
	      got, mask & 1 ? "NONE " : "", mask & 2 ? "IO " : "", mask & 4 ? "FS " : "",
	      mask ? "" : "none", ctx, once ? ", once each" : "");
}

/* The request, from a named function so that reports show the site. */
__attribute__((noinline)) void *shrink_request(size_t size, gfp_t flags)
{
	void *p = gfp_malloc(size, flags);

	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *shrink_plain_request(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" ::: "memory");
	return p;
}

/* A second thread that makes one request when asked. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int warm, asked, done;
	gfp_t flags;
	void *result;
} worker = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, NULL};

static void *worker_main(void *arg)
{
	(void)arg;
	sp_warm(4096);
	pthread_mutex_lock(&worker.lock);
	worker.warm = 1;
	pthread_cond_broadcast(&worker.cond);
	pthread_mutex_unlock(&worker.lock);
	for (;;) {
		pthread_mutex_lock(&worker.lock);
		while (worker.asked == worker.done)
			pthread_cond_wait(&worker.cond, &worker.lock);
		pthread_mutex_unlock(&worker.lock);
		void *p = shrink_request(4096, worker.flags);
		pthread_mutex_lock(&worker.lock);
		worker.result = p;
		worker.done = worker.asked;
		pthread_cond_broadcast(&worker.cond);
		pthread_mutex_unlock(&worker.lock);
	}
	return NULL;
}

static void *worker_request(gfp_t flags)
{
	pthread_mutex_lock(&worker.lock);
	worker.flags = flags;
	worker.asked++;
	pthread_cond_broadcast(&worker.cond);
	while (worker.done != worker.asked)
		pthread_cond_wait(&worker.cond, &worker.lock);
	pthread_mutex_unlock(&worker.lock);
	return worker.result;
}

/* One failing request with record-only shrinkers. */
static void probe(const char *what, gfp_t flags, int mask, gfp_t ctx)
{
	reset(0);
	void *p = shrink_request(4096, flags);
	check(p == NULL, "%s: the request fails under a full budget (got %p)", what, p);
	free(p);
	expect_called(what, mask, ctx, 0);
}

#define NR (GFP_NORETRY | GFP_NOWARN)

int main(void)
{
	struct sp_freer freer;
	pthread_t wt;

	if (!gfp_active())
		sp_die("the shim is not loaded\n");
	for (int i = 0; i < NCACHE; i++) {
		for (int j = 0; j < CACHE_BLOCKS; j++)
			caches[i].blk[caches[i].n++] = malloc(4096);
		if (gfp_shrinker_register(scan, &caches[i], caches[i].kind))
			sp_die("gfp_shrinker_register failed\n");
	}
	sp_freer_start(&freer);
	/* The worker is created inside a NOFS scope: it must not inherit it. */
	unsigned c0 = gfp_scope_push(GFP_NOFS);
	if (pthread_create(&wt, NULL, worker_main, NULL))
		sp_die("pthread_create failed\n");
	gfp_scope_pop(c0);
	/* Its warm-up must not meet the budget filled below. */
	pthread_mutex_lock(&worker.lock);
	while (!worker.warm)
		pthread_cond_wait(&worker.cond, &worker.lock);
	pthread_mutex_unlock(&worker.lock);
	int filled = sp_fill(4096, SP_FILL_ALL);
	check(filled > 1000, "the budget filled with %d blocks", filled);

	/* Kinds against base contexts. */
	probe("KERNEL", GFP_KERNEL | NR, 7, GFP_KERNEL | NR);
	probe("NOFS", GFP_NOFS | NR, 3, GFP_NOFS | NR);
	probe("NOIO", GFP_NOIO | NR, 1, GFP_NOIO | NR);
	probe("NOWAIT (no reclaim)", GFP_NOWAIT | GFP_NOWARN, 0, 0);
	probe("ATOMIC (no reclaim)", GFP_ATOMIC | GFP_NOWARN, 0, 0);

	/* Scopes nest exactly. */
	unsigned a = gfp_scope_push(GFP_NOFS);
	probe("scope NOFS, KERNEL request", GFP_KERNEL | NR, 3, GFP_NOFS | NR);
	unsigned b = gfp_scope_push(GFP_NOIO);
	probe("scope NOFS>NOIO", GFP_KERNEL | NR, 1, GFP_NOIO | NR);
	gfp_scope_pop(b);
	probe("scope NOFS>NOIO, NOIO popped", GFP_KERNEL | NR, 3, GFP_NOFS | NR);
	gfp_scope_pop(a);
	probe("all scopes popped", GFP_KERNEL | NR, 7, GFP_KERNEL | NR);

	a = gfp_scope_push(GFP_NOIO);
	b = gfp_scope_push(GFP_NOFS);
	probe("scope NOIO>NOFS", GFP_KERNEL | NR, 1, GFP_NOIO | NR);
	gfp_scope_pop(b);
	probe("scope NOIO>NOFS, NOFS popped", GFP_KERNEL | NR, 1, GFP_NOIO | NR);
	gfp_scope_pop(a);
	probe("NOIO>NOFS all popped", GFP_KERNEL | NR, 7, GFP_KERNEL | NR);

	a = gfp_scope_push(GFP_NOFS);
	b = gfp_scope_push(GFP_NOFS);
	gfp_scope_pop(b);
	probe("scope NOFS>NOFS, inner popped", GFP_KERNEL | NR, 3, GFP_NOFS | NR);
	gfp_scope_pop(a);
	probe("NOFS>NOFS all popped", GFP_KERNEL | NR, 7, GFP_KERNEL | NR);

	/* A scope of modifiers adds them: one round, then failure. */
	a = gfp_scope_push(GFP_NORETRY | GFP_NOWARN);
	reset(0);
	void *p = shrink_request(4096, GFP_KERNEL);
	check(p == NULL, "scope NORETRY|NOWARN: a KERNEL request fails (got %p)", p);
	expect_called("scope NORETRY|NOWARN", 7, GFP_KERNEL | NR, 1);
	gfp_scope_pop(a);

	/* Plain malloc gets default= (KERNEL|NORETRY here) plus the scope. */
	reset(0);
	errno = 0;
	p = shrink_plain_request(4096);
	check(p == NULL && errno == ENOMEM, "plain malloc fails with ENOMEM (got %p, errno %d)", p,
	      errno);
	expect_called("plain malloc, default=KERNEL|NORETRY", 7, GFP_KERNEL | GFP_NORETRY, 0);
	a = gfp_scope_push(GFP_NOFS);
	reset(0);
	p = shrink_plain_request(4096);
	check(p == NULL, "plain malloc in a NOFS scope fails (got %p)", p);
	expect_called("plain malloc in a NOFS scope", 3, GFP_NOFS | GFP_NORETRY, 0);
	gfp_scope_pop(a);

	/* A scope belongs to its thread. */
	a = gfp_scope_push(GFP_NOIO);
	reset(0);
	p = worker_request(GFP_KERNEL | NR);
	check(p == NULL, "other thread's request fails (got %p)", p);
	expect_called("other thread while main holds NOIO (and created in NOFS)", 7,
	              GFP_KERNEL | NR, 0);
	probe("main thread in its NOIO scope", GFP_KERNEL | NR, 1, GFP_NOIO | NR);
	gfp_scope_pop(a);

	/* A NOFS scope does not take NOFAIL away: the request loops until the
	 * freer frees (nofs_fail=1 would fail a NOFS request without NOFAIL). */
	a = gfp_scope_push(GFP_NOFS);
	reset(0);
	sp_freer_arm(&freer, 300, 128, NULL);
	double t0 = sp_now_ms();
	p = shrink_request(4096, GFP_KERNEL | GFP_NOFAIL);
	double t1 = sp_now_ms();
	int freed = atomic_load(&freer.freed);
	sp_freer_wait(&freer);
	check(p != NULL && freed,
	      "scope NOFS + NOFAIL request loops until the free (%s after %.0f ms, freed=%d)",
	      p ? "ok" : "NULL", t1 - t0, freed);
	expect_called("scope NOFS + NOFAIL", 3, GFP_NOFS | GFP_NOFAIL, 0);
	gfp_scope_pop(a);
	sp_fill(4096, SP_FILL_ALL);

	/* Shrinkers that free are progress; an FS cache is reclaimed only by
	 * a context with FS. */
	reset(4);
	p = shrink_request(4096, GFP_KERNEL);
	check(p != NULL, "KERNEL request served by reclaiming the FS cache (got %p)", p);
	expect_called("KERNEL with a freeing FS cache", 7, GFP_KERNEL, 0);
	sp_fill(4096, SP_FILL_ALL);

	reset(4);
	p = shrink_request(4096, GFP_NOFS | GFP_NOWARN);
	check(p == NULL, "NOFS request cannot use the FS cache: fails with nofs_fail=1 (got %p)",
	      p);
	check(caches[2].calls == 0, "NOFS never called the FS shrinker (%d calls)",
	      caches[2].calls);
	reset(2);
	p = shrink_request(4096, GFP_NOFS);
	check(p != NULL, "NOFS request served by reclaiming the IO cache (got %p)", p);
	check(caches[2].calls == 0 && caches[1].calls > 0 && caches[1].ctx == GFP_NOFS,
	      "NOFS: IO shrinker called with ctx 0x%x, FS shrinker %d calls", caches[1].ctx,
	      caches[2].calls);
	sp_fill(4096, SP_FILL_ALL);

	reset(2);
	p = shrink_request(4096, GFP_NOIO | GFP_NOWARN);
	check(p == NULL, "NOIO request cannot use the IO cache: fails with nofs_fail=1 (got %p)",
	      p);
	check(caches[1].calls == 0 && caches[2].calls == 0,
	      "NOIO called neither IO (%d) nor FS (%d)", caches[1].calls, caches[2].calls);
	reset(1);
	p = shrink_request(4096, GFP_NOIO);
	check(p != NULL, "NOIO request served by reclaiming the NONE cache (got %p)", p);
	check(caches[0].calls > 0 && caches[0].ctx == GFP_NOIO,
	      "NOIO: NONE shrinker called with ctx 0x%x", caches[0].ctx);

	sp_freer_stop(&freer);
	sp_out(1, "%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
