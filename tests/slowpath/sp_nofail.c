/*
 * sp_nofail - NOFAIL requests that must wait, never fail and never reach
 * the OOM killer, and the OOM step's notifiers; under a full limit= budget.
 *
 *   sp_nofail CASE [--threads N] [--flags F]
 *
 * Cases (N requester threads each, default 1):
 *   request   fill the budget, its reserve included; each thread asks
 *             gfp_malloc(4096, F) (default KERNEL|NOFAIL|NORETRY)
 *   scope     as request, each inside gfp_scope_push(GFP_NOWAIT)
 *   reclaim   a shrinker that, once the budget is full, asks 4096 bytes
 *             with KERNEL|NOFAIL from inside reclaim; each thread asks
 *             gfp_malloc(4096, NOFS), which calls it (and loops, unkilled,
 *             once it returned)
 *   notifier  an OOM notifier that asks 4096 bytes with KERNEL|NOFAIL, then
 *             frees 256 KiB of its cache; each thread asks 4096 (KERNEL)
 *   highroom  fill up to the HIGH watermark only (what only a request that
 *             ignores the watermarks may take is left); one KERNEL|NOFAIL
 *             4096, no freer but a deadline of 30 s
 *   spent     a shrinker that frees one 4 KiB block a call, less than it is
 *             asked; one KERNEL 4096 request; deadline 30 s
 *
 * The fill is of 4 KiB blocks, then 64-byte ones to the last bytes.
 * In request, scope, reclaim and notifier the freer frees 512 KiB (the
 * first 128 blocks) only once
 * the record stream (GFP_RECORD, a file) holds a canary record from every
 * requester thread, i.e. each is seen looping (canary.retries= rounds), or
 * once every request returned, and at the latest after 60 s (then seen=0). Prints one line per
 * requester: result=ok|null thread=I freed=0|1 seen=0|1 inner=ok|null|none where freed says whether
 * the freer had freed when the request returned and inner is what the shrinker's or notifier's own
 * NOFAIL got.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "sp_common.h"

#define MAXT 8

static int nthreads = 1;
static gfp_t req_flags = GFP_KERNEL | GFP_NOFAIL | GFP_NORETRY;
static const char *mode;
static pid_t tids[MAXT];
static atomic_int ready;
static atomic_int armed;      /* the shrinker or notifier may act */
static atomic_int inner_ok;   /* its NOFAIL requests that got memory */
static atomic_int inner_null; /* ... and that got NULL */
static atomic_int freed, seen;
static atomic_int done; /* requesters whose request returned */
static void *cache[64]; /* the notifier's: 64 blocks of 4 KiB */
static atomic_int cache_left = 64;

/* Whether the record file holds a canary record of every requester. */
static int all_seen(const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (int i = 0; i < nthreads; i++) {
		char want[64];
		snprintf(want, sizeof(want), "\"event\":\"canary\",\"pid\":%d,\"tid\":%d,",
		         (int)getpid(), (int)tids[i]);
		if (!strstr(buf, want))
			return 0;
	}
	return 1;
}

/* 512 KiB: the first 128 blocks of the fill, of 4 KiB each. */
static void free_head(void)
{
	atomic_store(&freed, 1);
	for (int i = 0; i < 128 && i < sp_nblocks; i++) {
		free(sp_blocks[i]);
		sp_blocks[i] = NULL;
	}
}

static void *freer(void *arg)
{
	const char *rec = arg;
	sp_warm(64);
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&armed))
		sp_sleep_ms(1);
	double deadline = sp_now_ms() + 60000;
	while (!all_seen(rec) && atomic_load(&done) < nthreads && sp_now_ms() < deadline)
		sp_sleep_ms(2);
	atomic_store(&seen, all_seen(rec));
	free_head();
	return NULL;
}

static __attribute__((noinline)) void inner_nofail(void)
{
	void *p = gfp_malloc(4096, GFP_KERNEL | GFP_NOFAIL);
	atomic_fetch_add(p ? &inner_ok : &inner_null, 1);
	free(p);
}

/* From inside reclaim: PF_MEMALLOC. */
static size_t shrink_nofail(void *arg, size_t want, gfp_t ctx)
{
	(void)arg, (void)want, (void)ctx;
	if (atomic_load(&armed))
		inner_nofail();
	return 0;
}

static size_t notify_nofail(void *arg)
{
	(void)arg;
	if (!atomic_load(&armed))
		return 0;
	inner_nofail();
	size_t bytes = 0;
	for (int i = 0; i < 64; i++) {
		int left = atomic_fetch_sub(&cache_left, 1);
		if (left <= 0)
			break;
		bytes += malloc_usable_size(cache[left - 1]);
		free(cache[left - 1]);
	}
	return bytes;
}

/* Frees one block a call, whatever it is asked. */
static size_t shrink_spent(void *arg, size_t want, gfp_t ctx)
{
	(void)arg, (void)want, (void)ctx;
	if (!atomic_load(&armed) || sp_nblocks <= 128)
		return 0;
	void *p = sp_blocks[--sp_nblocks];
	size_t n = malloc_usable_size(p);
	free(p);
	return n;
}

struct result {
	int ok, freed_then;
};
static struct result results[MAXT];

static void *requester(void *arg)
{
	int i = (int)(intptr_t)arg;
	tids[i] = (pid_t)syscall(SYS_gettid);
	sp_warm(64);
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&armed))
		sp_sleep_ms(1);
	unsigned c = !strcmp(mode, "scope") ? gfp_scope_push(GFP_NOWAIT) : 0;
	gfp_t f = !strcmp(mode, "request") || !strcmp(mode, "scope") ? req_flags
	          : !strcmp(mode, "highroom")                        ? GFP_KERNEL | GFP_NOFAIL
	          : !strcmp(mode, "reclaim")                         ? GFP_NOFS
	                                                             : GFP_KERNEL;
	void *p = gfp_malloc(4096, f);
	if (c)
		gfp_scope_pop(c);
	results[i] = (struct result){p != NULL, atomic_load(&freed)};
	atomic_fetch_add(&done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		sp_die(
		    "usage: sp_nofail request|scope|reclaim|notifier|highroom|spent [--threads N] "
		    "[--flags F]\n");
	mode = argv[1];
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--threads"))
			nthreads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--flags"))
			req_flags = sp_parse_flags(argv[i + 1]);
		else
			sp_die("unknown option %s\n", argv[i]);
	}
	if (nthreads < 1 || nthreads > MAXT)
		sp_die("--threads 1..%d\n", MAXT);
	if (!gfp_active())
		sp_die("the shim is not loaded\n");
	const char *rec = getenv("GFP_RECORD");
	bool single = !strcmp(mode, "highroom") || !strcmp(mode, "spent");
	if (!single && (!rec || rec[0] != '/'))
		sp_die("GFP_RECORD must name a file\n");

	if (!strcmp(mode, "reclaim") && gfp_shrinker_register(shrink_nofail, NULL, GFP_SHRINK_NONE))
		sp_die("gfp_shrinker_register failed\n");
	if (!strcmp(mode, "spent") && gfp_shrinker_register(shrink_spent, NULL, GFP_SHRINK_NONE))
		sp_die("gfp_shrinker_register failed\n");
	if (!strcmp(mode, "notifier")) {
		if (gfp_oom_notifier_register(notify_nofail, NULL))
			sp_die("gfp_oom_notifier_register failed\n");
		for (int i = 0; i < 64; i++)
			if (!(cache[i] = malloc(4096)))
				sp_die("no cache\n");
	}
	pthread_t t[MAXT], fr;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, requester, (void *)(intptr_t)i))
			sp_die("pthread_create failed\n");
	if (!single && pthread_create(&fr, NULL, freer, (void *)rec))
		sp_die("pthread_create failed\n");
	while (atomic_load(&ready) < nthreads + !single)
		sp_sleep_ms(1);

	/* The budget full: to the limit, or (highroom) to HIGH's watermark;
	 * in 4 KiB blocks, then in 64-byte ones to the last bytes. */
	gfp_t fill = !strcmp(mode, "highroom") ? GFP_KERNEL | GFP_HIGH | GFP_NORETRY | GFP_NOWARN
	                                       : SP_FILL_ALL;
	sp_fill(4096, fill);
	sp_fill(64, fill);
	double deadline = sp_now_ms() + 30000;
	atomic_store(&armed, 1);
	bool joined = false;
	if (single) {
		/* No freer: a request still waiting at the deadline is given
		 * memory then, and says so (freed=1). */
		while (!(joined = pthread_tryjoin_np(t[0], NULL) == 0) && sp_now_ms() < deadline)
			sp_sleep_ms(5);
		if (!joined)
			free_head();
	}
	for (int i = joined; i < nthreads; i++)
		pthread_join(t[i], NULL);
	if (!single)
		pthread_join(fr, NULL);
	for (int i = 0; i < nthreads; i++)
		sp_out(1, "result=%s thread=%d freed=%d seen=%d inner=%s\n",
		       results[i].ok ? "ok" : "null", i, results[i].freed_then, atomic_load(&seen),
		       atomic_load(&inner_null) ? "null"
		       : atomic_load(&inner_ok) ? "ok"
		                                : "none");
	return 0;
}
