/*
 * txn - a transaction-style program for gfp_reserve (doc/budget.md). The main
 * thread is the worker: it takes a reservation and makes many small requests
 * while other threads ("hogs") hold the budget at its watermark. Each
 * subcommand prints key=value lines that the scripts of tests/reserve check;
 * nothing is printed through stdio (its buffer is a malloc).
 *
 *   txn hold     R=4M reserved, X=1M allocated before the hogs fill the
 *                budget, then the transaction: 4K KERNEL requests until one
 *                fails, while the hogs keep asking (NOWAIT) for more.
 *   txn block    the hogs fill the budget; gfp_reserve(4M, KERNEL) returns
 *                only after a hog freed enough (2M once the reservation has
 *                printed a canary to GFP_LOG, 4M more once it has printed
 *                another after that: the first free is not enough).
 *   txn noretry  the hogs fill the budget; NORETRY, NOWAIT and ATOMIC
 *                reservations fail at once; after a free a NORETRY
 *                reservation that fits holds its bytes back.
 *   txn nest     two nested reservations hold back their sum; one
 *                gfp_unreserve gives all back; a thread that exits holding a
 *                reservation gives it back.
 *   txn ulimit   no budget: the hogs exhaust the address space (RLIMIT_AS)
 *                while the worker holds an 8M reservation, then the worker
 *                runs a NOFS transaction of about 4M and 16 plain mallocs
 *                (run with and without reserve.prefault).
 *   txn late     while the worker holds 4M, a hog's single early request,
 *                another hog's fill, then the first hog's late requests: the
 *                budget is full for them, and the worker still gets all 4M.
 *   txn stress SECONDS THREADS
 *                THREADS slots reserve, allocate inside the reservation,
 *                free and unreserve (sometimes nested, sometimes NORETRY) for
 *                SECONDS, and on until each slot has done its share (see
 *                slot_done: however slow the machine); each slot's thread
 *                exits holding its reservation every 20-60 rounds and a new
 *                one takes its place.
 *
 * Blocks are 4096 bytes (a jemalloc size class: usable == requested), so
 * fills count exactly: a fill is the number of blocks that fit under the
 * watermark.
 */
#include <sched.h>
#include <stdbool.h>
#include <sys/resource.h>

#include "../slowpath/sp_common.h"
#include "statm.h"

#define BLK      4096
#define KIB      ((size_t)1024)
#define MIB      (1024 * KIB)
#define QUIET    (GFP_NORETRY | GFP_NOWARN)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define SLOW_MS  50.0 /* a request this slow waited (the policies use wait= >= 200ms) */

#define out(...) sp_out(1, __VA_ARGS__)

static void warm(void)
{
	/* Set up this thread's allocator state while memory is plentiful. */
	static const size_t sizes[] = {16, 256, 4096, 65536};
	for (size_t i = 0; i < NELEM(sizes); i++) {
		void *volatile p = malloc(sizes[i]);
		free(p);
	}
}

/* ------------------------------------------------------------------------
 * Hogs: threads that fill the budget (or the address space) on command.
 * ---------------------------------------------------------------------- */

enum { H_ONE, H_FILL, H_FILL_PLAIN, H_FILL_AS, H_PROBE, H_HAMMER, H_FREE, H_STAGED_FREE, H_QUIT };

#define NHOG_MAX 3
#define HOG_CAP  (1 << 18)

struct hog {
	pthread_t th;
	int cmd, gen, done; /* under hog_lock */
	int n;              /* blocks held in blk[] */
	long got;           /* what the last command got: blocks, or bytes for H_FILL_AS */
	long tries;         /* H_HAMMER, H_PROBE: requests made */
	/* H_STAGED_FREE: free k1 blocks once the request of size `canary`
	 * waits (a canary of it in GFP_LOG), then k2 more once it is waiting
	 * still (another canary). */
	int k1, k2;
	size_t canary;
	atomic_int stage;
	double t_stage2;
	void **blk;
};

static void *hog_blk[NHOG_MAX][HOG_CAP];
static struct hog hogs[NHOG_MAX];
static int nhogs;
static atomic_int hammer_stop;
static pthread_mutex_t hog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hog_cond = PTHREAD_COND_INITIALIZER;

static void hog_push(struct hog *h, void *p, size_t size)
{
	if (h->n == HOG_CAP)
		sp_die("hog: more than %d blocks: no pressure?\n", HOG_CAP);
	memset(p, 0x5a, size < 64 ? size : 64);
	h->blk[h->n++] = p;
}

/* Blocks of `size` until one fails; returns how many. Flags 0: plain
 * malloc (the process default, KERNEL). */
static long hog_fill(struct hog *h, size_t size, gfp_t flags)
{
	long n = 0;
	void *p;
	while ((p = flags ? gfp_malloc(size, flags) : malloc(size)) != NULL) {
		hog_push(h, p, size);
		n++;
	}
	return n;
}

/* One block, plain malloc: 1 or 0. */
static long hog_fill1(struct hog *h)
{
	void *p = malloc(BLK);
	if (p)
		hog_push(h, p, BLK);
	return p != NULL;
}

static void hog_free_first(struct hog *h, int k)
{
	if (k > h->n)
		k = h->n;
	for (int i = 0; i < k; i++)
		free(h->blk[i]);
	memmove(h->blk, h->blk + k, (size_t)(h->n - k) * sizeof(void *));
	h->n -= k;
}

/* How many canaries of a request of `size` GFP_LOG holds. */
static int canaries(size_t size)
{
	char pat[96];
	if (!getenv("GFP_LOG"))
		sp_die("block: no GFP_LOG to read the canaries from\n");
	snprintf(pat, sizeof(pat), SP_CANARY " size %zu ", size);
	return sp_log_count(pat);
}

/* Waits (for up to a generous minute) until there are more than `seen`. */
static void canaries_after(size_t size, int seen)
{
	for (int i = 0; canaries(size) <= seen; i++) {
		if (i == 12000)
			sp_die("block: the reservation printed no canary in 60 s\n");
		sp_sleep_ms(5);
	}
}

static void hog_run(struct hog *h, int cmd)
{
	static const size_t as_sizes[] = {65536, 4096, 256};
	h->got = 0;
	switch (cmd) {
	case H_ONE:
		h->got = hog_fill1(h);
		break;
	case H_FILL:
		h->got = hog_fill(h, BLK, GFP_KERNEL | QUIET);
		break;
	case H_FILL_PLAIN:
		h->got = hog_fill(h, BLK, 0);
		break;
	case H_FILL_AS:
		/* Large blocks first, then smaller ones into what is left. */
		for (size_t i = 0; i < NELEM(as_sizes); i++)
			h->got += hog_fill(h, as_sizes[i], GFP_KERNEL | QUIET) * (long)as_sizes[i];
		break;
	case H_PROBE: /* 64 more requests: how many succeed? */
		for (h->tries = 0; h->tries < 64; h->tries++) {
			void *p = gfp_malloc(BLK, GFP_KERNEL | QUIET);
			if (p) {
				hog_push(h, p, BLK);
				h->got++;
			}
		}
		break;
	case H_HAMMER: /* keep asking, without reclaim, until told to stop */
		for (h->tries = 0; h->tries == 0 || !atomic_load(&hammer_stop); h->tries++) {
			void *p = gfp_malloc(BLK, GFP_NOWAIT | GFP_NOWARN);
			if (p) {
				hog_push(h, p, BLK);
				h->got++;
			}
			sp_sleep_ms(1);
		}
		break;
	case H_FREE:
		h->got = h->n;
		hog_free_first(h, h->n);
		break;
	case H_STAGED_FREE: {
		canaries_after(h->canary, 0);
		atomic_store(&h->stage, 1);
		hog_free_first(h, h->k1);
		/* Counted after the free: the next one is of a wait after it. */
		canaries_after(h->canary, canaries(h->canary));
		h->t_stage2 = sp_now_ms();
		/* Before the free: stage 2 at a return means after it. */
		atomic_store(&h->stage, 2);
		hog_free_first(h, h->k2);
		break;
	}
	}
}

static void *hog_main(void *arg)
{
	struct hog *h = arg;
	int gen = 0;
	warm();
	for (;;) {
		pthread_mutex_lock(&hog_lock);
		while (h->gen == gen)
			pthread_cond_wait(&hog_cond, &hog_lock);
		gen = h->gen;
		int cmd = h->cmd;
		pthread_mutex_unlock(&hog_lock);
		if (cmd == H_QUIT)
			return NULL;
		hog_run(h, cmd);
		pthread_mutex_lock(&hog_lock);
		h->done = gen;
		pthread_cond_broadcast(&hog_cond);
		pthread_mutex_unlock(&hog_lock);
	}
}

static long hogs_do(int cmd);

static void hogs_start(int n)
{
	nhogs = n;
	for (int i = 0; i < n; i++) {
		hogs[i].blk = hog_blk[i];
		if (pthread_create(&hogs[i].th, NULL, hog_main, &hogs[i]))
			sp_die("pthread_create failed\n");
	}
	/* A first command, so that every hog has warmed up when this returns:
	 * under RLIMIT_AS jemalloc cannot set up a new thread's state. */
	hogs_do(H_FREE);
}

static void hog_post(struct hog *h, int cmd)
{
	pthread_mutex_lock(&hog_lock);
	h->cmd = cmd;
	h->gen++;
	pthread_cond_broadcast(&hog_cond);
	pthread_mutex_unlock(&hog_lock);
}

static long hog_wait(struct hog *h)
{
	pthread_mutex_lock(&hog_lock);
	while (h->done != h->gen)
		pthread_cond_wait(&hog_cond, &hog_lock);
	pthread_mutex_unlock(&hog_lock);
	return h->got;
}

/* Every hog at once; returns the sum of what they got. */
static long hogs_do(int cmd)
{
	long sum = 0;
	for (int i = 0; i < nhogs; i++)
		hog_post(&hogs[i], cmd);
	for (int i = 0; i < nhogs; i++)
		sum += hog_wait(&hogs[i]);
	return sum;
}

static void hammer_start(void)
{
	atomic_store(&hammer_stop, 0);
	for (int i = 0; i < nhogs; i++)
		hog_post(&hogs[i], H_HAMMER);
}

/* Stops the hammering; prints how many requests were made and served. */
static void hammer_stop_print(const char *prefix)
{
	long tries = 0, got = 0;
	atomic_store(&hammer_stop, 1);
	for (int i = 0; i < nhogs; i++) {
		got += hog_wait(&hogs[i]);
		tries += hogs[i].tries;
	}
	out("%s_tries=%ld\n%s_got=%ld\n", prefix, tries, prefix, got);
}

static void hogs_quit(void)
{
	for (int i = 0; i < nhogs; i++) {
		hog_post(&hogs[i], H_QUIT);
		pthread_join(hogs[i].th, NULL);
	}
}

/* ------------------------------------------------------------------------
 * The worker's transaction
 * ---------------------------------------------------------------------- */

#define W_CAP (1 << 16)
static void *w_blk[W_CAP];
static int w_n;

struct txn {
	long ok, null, slow;
	double max_ms, fail_ms;
};

/* Up to `max` requests of `size` with `flags` (0: plain malloc); stops at the
 * first NULL when `stop`. Every block is written and kept. */
static struct txn txn_run(long max, size_t size, gfp_t flags, bool stop)
{
	struct txn t = {0};
	for (long i = 0; i < max; i++) {
		double t0 = sp_now_ms();
		void *p = flags ? gfp_malloc(size, flags) : malloc(size);
		double dt = sp_now_ms() - t0;
		if (p == NULL) {
			t.null++;
			t.fail_ms = dt;
			if (stop)
				break;
			continue;
		}
		memset(p, 0x6b, size);
		if (w_n == W_CAP)
			sp_die("worker: more than %d blocks\n", W_CAP);
		w_blk[w_n++] = p;
		t.ok++;
		if (dt > t.max_ms)
			t.max_ms = dt;
		if (dt >= SLOW_MS)
			t.slow++;
	}
	return t;
}

static void txn_print(const char *prefix, const struct txn *t)
{
	out("%s_ok=%ld\n%s_null=%ld\n%s_slow=%ld\n%s_max_ms=%.2f\n%s_fail_ms=%.1f\n", prefix, t->ok,
	    prefix, t->null, prefix, t->slow, prefix, t->max_ms, prefix, t->fail_ms);
}

static void w_free_all(void)
{
	for (int i = 0; i < w_n; i++)
		free(w_blk[i]);
	w_n = 0;
}

/* A fill by one hog: the blocks that fit now. One thread, so that no
 * request that passed the fast path's check lands after the others filled
 * the budget exactly (the race concurrent fills have, see txn race). */
static long hog0_fill(void)
{
	hog_post(&hogs[0], H_FILL);
	return hog_wait(&hogs[0]);
}

/* The same, given back at once. */
static long probe_fill(void)
{
	long n = hog0_fill();
	hog_post(&hogs[0], H_FREE);
	hog_wait(&hogs[0]);
	return n;
}

static int reserve_timed(const char *name, size_t bytes, gfp_t flags)
{
	double t0 = sp_now_ms();
	errno = 0;
	int rc = gfp_reserve(bytes, flags);
	int err = errno;
	out("%s_rc=%d\n%s_errno=%d\n%s_ms=%.2f\n", name, rc, name, rc ? err : 0, name,
	    sp_now_ms() - t0);
	return rc;
}

/* ------------------------------------------------------------------------
 * Subcommands
 * ---------------------------------------------------------------------- */

static int cmd_hold(void)
{
	const size_t R = 4 * MIB, X = 1 * MIB;
	out("R=%zu\nX=%zu\nblk=%d\n", R, X, BLK);
	hogs_start(3);
	out("base=%ld\n", probe_fill());
	reserve_timed("reserve", R, GFP_KERNEL);

	/* X while the budget has room. */
	struct txn pre = txn_run((long)(X / BLK), BLK, GFP_KERNEL, false);
	txn_print("pre", &pre);

	/* The other threads fill the budget to their watermark and keep asking. */
	out("held=%ld\n", hog0_fill());
	hammer_start();
	/* The transaction: 4K requests until one fails (past the reservation). */
	struct txn in = txn_run((long)(R / BLK) + 16, BLK, GFP_KERNEL, true);
	hammer_stop_print("hammer");
	txn_print("in", &in);

	w_free_all();
	gfp_unreserve();
	hogs_do(H_FREE);
	out("after=%ld\n", probe_fill());
	hogs_quit();
	return 0;
}

/* After a reservation (`rc` 0) under a full budget that a hog partly freed:
 * what the hog fills again (the reservation's bytes are out of its reach),
 * then what it fills after the unreserve. */
static int refill_unreserve_refill(int rc)
{
	out("refill=%ld\n", hogs_do(H_FILL));
	if (rc == 0)
		gfp_unreserve();
	out("after_unreserve=%ld\n", hogs_do(H_FILL));
	hogs_quit();
	return 0;
}

static int cmd_block(void)
{
	const size_t R = 4 * MIB;
	hogs_start(1);
	struct hog *h = &hogs[0];
	out("R=%zu\nfill=%ld\n", R, hogs_do(H_FILL));
	/* 2M first (not enough), then 4M more. */
	h->k1 = (int)(R / 2 / BLK);
	h->k2 = (int)(R / BLK);
	h->canary = R;
	double t0 = sp_now_ms();
	hog_post(h, H_STAGED_FREE);
	int rc = gfp_reserve(R, GFP_KERNEL);
	double t1 = sp_now_ms();
	int stage = atomic_load(&h->stage);
	hog_wait(h);
	out("reserve_rc=%d\nreserve_ms=%.1f\nstage_at_return=%d\n", rc, t1 - t0, stage);
	out("after_free_ms=%.1f\n", t1 - h->t_stage2);
	/* The hog gets back only the 2M the reservation did not need. */
	return refill_unreserve_refill(rc);
}

static int cmd_noretry(void)
{
	hogs_start(1);
	struct hog *h = &hogs[0];
	out("fill=%ld\n", hogs_do(H_FILL));
	reserve_timed("noretry", 64 * KIB, GFP_KERNEL | GFP_NORETRY | GFP_NOWARN);
	reserve_timed("costly_noretry", 4 * MIB, GFP_KERNEL | GFP_NORETRY | GFP_NOWARN);
	/* More than ATOMIC's share of min_free (5/8 of 160K): no reserve helps. */
	reserve_timed("nowait", 256 * KIB, GFP_NOWAIT | GFP_NOWARN);
	reserve_timed("atomic", 256 * KIB, GFP_ATOMIC | GFP_NOWARN);
	/* 512K freed: a 256K NORETRY reservation fits at once and holds its
	 * bytes back from the hog; failed ones held nothing. */
	hog_free_first(h, (int)(512 * KIB / BLK));
	return refill_unreserve_refill(reserve_timed("fits", 256 * KIB, GFP_KERNEL | GFP_NORETRY));
}

static void *exit_holding(void *arg)
{
	(void)arg;
	warm();
	errno = 0;
	long rc = gfp_reserve(2 * MIB, GFP_KERNEL);
	/* Half of it used and given back; the reservation is left to the exit. */
	void *blk[128];
	for (int i = 0; i < 128; i++)
		blk[i] = malloc(BLK);
	for (int i = 0; i < 128; i++)
		free(blk[i]);
	return (void *)rc;
}

static int cmd_nest(void)
{
	hogs_start(2);
	out("base=%ld\n", probe_fill());
	reserve_timed("outer", 1 * MIB, GFP_KERNEL);
	reserve_timed("inner", 2 * MIB, GFP_KERNEL | GFP_NORETRY);
	out("nested=%ld\n", probe_fill());
	gfp_unreserve();
	out("unreserved=%ld\n", probe_fill());
	gfp_unreserve(); /* a second one has nothing to give back */
	out("unreserved_twice=%ld\n", probe_fill());
	/* Each fits alone, not both: the nested one fails at once. */
	reserve_timed("half", 10 * MIB, GFP_KERNEL);
	reserve_timed("over", 10 * MIB, GFP_NOFS);
	gfp_unreserve();

	pthread_t th;
	void *rc;
	if (pthread_create(&th, NULL, exit_holding, NULL))
		sp_die("pthread_create failed\n");
	pthread_join(th, &rc);
	out("thread_rc=%ld\n", (long)rc);
	out("thread_exited=%ld\n", probe_fill());
	hogs_quit();
	return 0;
}

/* While the worker holds R, one hog makes a single malloc far from the
 * watermark (the fast path may grant it more without looking again), then
 * another hog fills the budget to the lowered watermark, then the first hog
 * mallocs until NULL (it should get nothing: the budget is full), then the
 * worker allocates until NULL (it should get all of R). */
static int cmd_late(void)
{
	const size_t R = 4 * MIB;
	hogs_start(2);
	out("R=%zu\nexpected=%zu\n", R, R / BLK);
	reserve_timed("reserve", R, GFP_KERNEL);
	hog_post(&hogs[0], H_ONE);
	out("first=%ld\n", hog_wait(&hogs[0]));
	hog_post(&hogs[1], H_FILL);
	out("filled=%ld\n", hog_wait(&hogs[1]));
	hog_post(&hogs[0], H_FILL_PLAIN);
	out("late=%ld\n", hog_wait(&hogs[0]));
	struct txn in = txn_run((long)(R / BLK) + 16, BLK, GFP_KERNEL | QUIET, true);
	out("got=%ld\n", in.ok);
	w_free_all();
	gfp_unreserve();
	hogs_do(H_FREE);
	hogs_quit();
	return 0;
}

static int cmd_ulimit(void)
{
	const size_t R = 8 * MIB;
	const long pairs = 1000; /* 1000 x (4096 + 128): about 4M, half the reservation */
	/* Threads first: their stacks need address space. */
	hogs_start(2);
	warm();
	reserve_timed("reserve", R, GFP_KERNEL);

	struct rlimit old, rl;
	if (getrlimit(RLIMIT_AS, &old))
		sp_die("getrlimit failed\n");
	rl = old;
	rl.rlim_cur = (rlim_t)statm_bytes(0) + 32 * MIB;
	if (setrlimit(RLIMIT_AS, &rl))
		sp_die("setrlimit failed\n");
	/* Filled until a pass gets nothing: the two hogs fill at once, and what
	 * one's failing request gives back (its reclaim flushes jemalloc's
	 * caches) can come after the other has stopped. */
	long hog = hogs_do(H_FILL_AS), more = hog;
	for (int pass = 0; pass < 4 && more > 0; pass++)
		hog += (more = hogs_do(H_FILL_AS));
	out("hog_bytes=%ld\n", hog);
	out("hog_probe=%ld\n", hogs_do(H_PROBE));

	/* The transaction, while the hogs keep asking: a filesystem's, NOFS.
	 * NOWARN, so that no failure report runs the unwinder: it lends its own
	 * reserve of address space to whoever maps next (unwind.c). */
	const gfp_t f = GFP_NOFS | GFP_NOWARN;
	hammer_start();
	struct txn big = {0}, small = {0};
	for (long i = 0; i < pairs; i++) {
		struct txn a = txn_run(1, BLK, f, false), b = txn_run(1, 128, f, false);
		big.ok += a.ok, big.null += a.null;
		small.ok += b.ok, small.null += b.null;
	}
	hammer_stop_print("hammer");
	out("txn_4k_ok=%ld\ntxn_4k_null=%ld\ntxn_128_ok=%ld\ntxn_128_null=%ld\n", big.ok, big.null,
	    small.ok, small.null);
	/* A callee that knows nothing of flags: plain malloc, KERNEL. */
	struct txn plain = txn_run(16, BLK, 0, false);
	out("plain_ok=%ld\n", plain.ok);

	long vm_held = statm_bytes(0);
	gfp_unreserve();
	long vm_after = statm_bytes(0);
	out("unmapped=%ld\n", vm_held - vm_after);
	/* The transaction's blocks stay valid after the unreserve. */
	long bad = 0;
	for (int i = 0; i < w_n; i++)
		bad += ((unsigned char *)w_blk[i])[0] != 0x6b;
	out("blocks_corrupt=%ld\n", bad);
	/* What was unmapped is address space the others can use again. */
	hog_post(&hogs[0], H_FILL_AS);
	out("hog_after_unreserve=%ld\n", hog_wait(&hogs[0]));

	hogs_do(H_FREE);
	w_free_all();
	if (setrlimit(RLIMIT_AS, &old)) /* jemalloc needs room to exit */
		sp_die("setrlimit failed\n");
	hogs_quit();
	return 0;
}

/* ---- stress ---- */

struct slot {
	pthread_t launcher;
	unsigned seed;
	long rounds, taken, failed, wrong_errno, nested, in_fail, allocs, exits_holding, threads;
	double max_wait_ms;
};

static atomic_int stress_stop;

/* A slot's share of the work, whatever the time it took: so many exits
 * holding a reservation, reservations and nested ones. Read by the slot's
 * thread, and by its launcher after joining it. */
static bool slot_done(const struct slot *s)
{
	return s->exits_holding >= 4 && s->taken >= 100 && s->nested >= 1;
}

static void *stress_worker(void *arg)
{
	static const size_t sizes[] = {4096, 512, 1024, 16384, 64};
	struct slot *s = arg;
	void *blk[4096];
	int life = 20 + (int)(rand_r(&s->seed) % 41);
	for (int round = 0;; round++) {
		bool last = round >= life - 1 || (atomic_load(&stress_stop) && slot_done(s));
		/* 512K..1.5M: 16 threads ask for more than the budget holds. */
		size_t r = (size_t)(8 + rand_r(&s->seed) % 17) * 64 * KIB;
		gfp_t f = rand_r(&s->seed) % 4 == 0 ? GFP_KERNEL | QUIET : GFP_KERNEL;
		double t0 = sp_now_ms();
		errno = 0;
		int rc = gfp_reserve(r, f);
		double dt = sp_now_ms() - t0;
		s->rounds++;
		if (rc) {
			s->failed++;
			s->wrong_errno += errno != ENOMEM || !(f & GFP_NORETRY);
			if (last)
				return NULL;
			sched_yield();
			continue;
		}
		s->taken++;
		if (dt > s->max_wait_ms)
			s->max_wait_ms = dt;
		if (rand_r(&s->seed) % 3 == 0) { /* nesting adds */
			if (gfp_reserve(64 * KIB, GFP_KERNEL | QUIET) == 0) {
				s->taken++;
				s->nested++;
				r += 64 * KIB;
			} else {
				s->failed++;
			}
		}
		/* Inside the reservation, with a margin for other threads'
		 * requests already past their check when it was taken. */
		size_t used = 0;
		int n = 0;
		for (int i = 0; used + 16384 <= r - 128 * KIB && n < 4096; i++) {
			size_t sz = sizes[(unsigned)(round + i) % NELEM(sizes)];
			void *p = gfp_malloc(sz, GFP_KERNEL | QUIET);
			s->allocs++;
			if (p == NULL) {
				s->in_fail++;
				continue;
			}
			memset(p, 0x33, 64);
			blk[n++] = p;
			used += sz;
		}
		for (int i = 0; i < n; i++)
			free(blk[i]);
		if (last) {
			s->exits_holding++; /* the thread's exit gives it back */
			return NULL;
		}
		gfp_unreserve();
	}
}

static void *stress_launcher(void *arg)
{
	struct slot *s = arg;
	do {
		pthread_t th;
		if (pthread_create(&th, NULL, stress_worker, s))
			sp_die("pthread_create failed\n");
		pthread_join(th, NULL);
		s->threads++;
	} while (!atomic_load(&stress_stop) || !slot_done(s));
	return NULL;
}

static void *warm_thread(void *arg)
{
	(void)arg;
	warm();
	return NULL;
}

/* The main thread's fill: blocks that fit now, given back at once. */
static long main_fill(void)
{
	struct txn t = txn_run(W_CAP, BLK, GFP_KERNEL | QUIET, true);
	w_free_all();
	return t.ok;
}

static int cmd_stress(int seconds, int nslots)
{
	static struct slot slots[64];
	if (nslots < 1 || nslots > 64)
		sp_die("stress: 1 to 64 threads\n");
	/* A first generation of threads, so that glibc's caches of thread
	 * stacks are as full before as after. */
	for (int i = 0; i < nslots; i++)
		if (pthread_create(&slots[i].launcher, NULL, warm_thread, NULL))
			sp_die("pthread_create failed\n");
	for (int i = 0; i < nslots; i++)
		pthread_join(slots[i].launcher, NULL);
	out("base=%ld\n", main_fill());

	double t0 = sp_now_ms();
	for (int i = 0; i < nslots; i++) {
		slots[i].seed = 12345u + (unsigned)i * 7919u;
		if (pthread_create(&slots[i].launcher, NULL, stress_launcher, &slots[i]))
			sp_die("pthread_create failed\n");
	}
	sp_sleep_ms(seconds * 1000);
	atomic_store(&stress_stop, 1);
	double t_stop = sp_now_ms();
	struct slot sum = {0};
	for (int i = 0; i < nslots; i++) {
		pthread_join(slots[i].launcher, NULL);
		struct slot *s = &slots[i];
		sum.rounds += s->rounds, sum.taken += s->taken, sum.failed += s->failed;
		sum.wrong_errno += s->wrong_errno, sum.nested += s->nested;
		sum.in_fail += s->in_fail, sum.allocs += s->allocs;
		sum.exits_holding += s->exits_holding, sum.threads += s->threads;
		if (s->max_wait_ms > sum.max_wait_ms)
			sum.max_wait_ms = s->max_wait_ms;
	}
	out("seconds=%.1f\nstop_ms=%.0f\n", (sp_now_ms() - t0) / 1000, sp_now_ms() - t_stop);
	out("rounds=%ld\ntaken=%ld\nfailed=%ld\nwrong_errno=%ld\nnested=%ld\n", sum.rounds,
	    sum.taken, sum.failed, sum.wrong_errno, sum.nested);
	out("allocs=%ld\nin_fail=%ld\nexits_holding=%ld\nthreads=%ld\nmax_wait_ms=%.1f\n",
	    sum.allocs, sum.in_fail, sum.exits_holding, sum.threads, sum.max_wait_ms);
	out("after=%ld\n", main_fill());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		sp_die("usage: txn hold|block|noretry|nest|ulimit|late|stress SECONDS THREADS\n");
	out("active=%d\n", gfp_active());
	warm();
	const char *c = argv[1];
	if (!strcmp(c, "hold"))
		return cmd_hold();
	if (!strcmp(c, "block"))
		return cmd_block();
	if (!strcmp(c, "noretry"))
		return cmd_noretry();
	if (!strcmp(c, "nest"))
		return cmd_nest();
	if (!strcmp(c, "ulimit"))
		return cmd_ulimit();
	if (!strcmp(c, "late"))
		return cmd_late();
	if (!strcmp(c, "stress") && argc == 4)
		return cmd_stress(atoi(argv[2]), atoi(argv[3]));
	sp_die("unknown subcommand '%s'\n", c);
}
