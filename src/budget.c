/*
 * budget.c - the memory budget (limit=): live usable bytes against
 * watermarks, and the wait queue of requests under pressure.
 *
 * jemalloc already counts, per thread, the usable bytes it has handed out and
 * taken back (thread.allocatedp / thread.deallocatedp: two counters in the
 * thread's own jemalloc state). A thread's live bytes are the difference;
 * the process's are the sum over threads plus what exited threads left. So
 * no call pays for accounting: a thread folds its difference into a shared
 * estimate only when it drifted by more than one batch, and a request is
 * accepted at once while the estimate plus every thread's largest possible
 * drift stays under the lowest watermark. Closer to the limit, or for a
 * request larger than a batch, the decision is exact: under a lock, against
 * the sum of every thread's counters, with the allocation made under the
 * same lock so that two requests cannot both take the last bytes.
 *
 * Watermarks (the kernel's __zone_watermark_ok()): ordinary requests may fill up to
 * limit - min_free; HIGH may use half of min_free, ATOMIC (HIGH without direct
 * reclaim) 5/8, NOWAIT none, MEMALLOC all of it. Reservations (reserve.c)
 * lower every watermark by the bytes reserved and not drawn yet; only their
 * own thread may go below it, by what it draws.
 *
 * Under limit.scope=tree the estimate, the limit, reservations and the wait
 * queue are the tree's (tree.c): a fold is also published to the process's
 * slot, a decision near the watermark also takes the tree's lock and counts
 * the other members' last folds, and a wait is on the tree's futex.
 *
 * What the program maps itself (mapped.c) is in no jemalloc counter: it is
 * a count of its own, added to the estimate as it changes and to every
 * exact sum. Mappings are few and large, so each is decided under the lock,
 * as a large request is.
 *
 * The counting itself (the threads' counters, the exited threads' total,
 * the mappings' count, their sums) is budget_counts.c's; this file decides.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <jemalloc/jemalloc.h>

#include "internal.h"
#include "route_switch.h"
#include "budget_wait.h"
#include "reserve_draw.h"
#include "budget_counts.h"

static int64_t limit_b, min_free_b, batch;
static int64_t reserved; /* atomic; written under exact_lock: reserved, not drawn */
static pthread_mutex_t exact_lock = PTHREAD_MUTEX_INITIALIZER;

static void derive_watermarks(void);

/* What the allocation routes are pointed at under the budget family
 * (route.c chose it: routed): its own functions, which take from
 * allowances without looking at revocations (fast), or the shim's, which
 * do. Under exact_lock once routed. */
static bool routed;
static bool routes_fast;

void budget_route_hook(void)
{
	gfp_lock(&exact_lock);
	routed = true;
	__atomic_store_n(&routes_fast, true, __ATOMIC_RELAXED);
	route_budget_switch(true);
	gfp_unlock(&exact_lock);
}

/* Under exact_lock: takes back every allowance. The engine's takes compare
 * the generation; the budget routes do not, as they take with one
 * instruction on the thread's own word, so they are pointed at the shim's
 * routes first: a thread that read the old route before the fence has one
 * request in flight, as one past its generation check has. */
static void budget_revoke(void)
{
	if (routed && __atomic_load_n(&routes_fast, __ATOMIC_RELAXED)) {
		route_budget_switch(false);
		__atomic_store_n(&routes_fast, false, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	__atomic_add_fetch(&gfp_budget.grant_gen, 1, __ATOMIC_ACQ_REL);
}

/* The budget routes come back when the budget is far from its watermark
 * again: whatever a thread still holds from before the revocation (a batch
 * at most, spent without a look) then fits twice over. */
static void routes_back(void)
{
	if (pthread_mutex_trylock(&exact_lock) != 0)
		return; /* a decision under way: the next grant looks again */
	gfp_tls.guard++;
	if (routed && !routes_fast &&
	    budget_clearly_fits(2 * gfp_budget.batch * (int64_t)thread_count())) {
		routes_fast = true;
		route_budget_switch(true);
	}
	gfp_tls.guard--;
	pthread_mutex_unlock(&exact_lock);
}

/* What follows the budget from outside (budget.h): atomic, as gfp-ctl's
 * set hands them over again while threads take grants. */
static struct budget_followers followers;

void budget_follow(struct budget_followers f)
{
	__atomic_store_n(&followers.look, f.look, __ATOMIC_RELAXED);
	__atomic_store_n(&followers.marks, f.marks, __ATOMIC_RELAXED);
}

/* Where the budget looks anyway, far from (a grant) or near (an exact
 * decision) the watermark, and holds no lock: what follows the budget
 * from outside looks too. */
static inline void budget_look_around(bool near)
{
	void (*look)(bool) = __atomic_load_n(&followers.look, __ATOMIC_RELAXED);
	if (unlikely(look != NULL))
		look(near);
}

void budget_grant(int64_t amount, uint64_t gen)
{
	gfp_tls.budget.allowance = amount;
	gfp_tls.budget.allowance_gen = gen;
	if (unlikely(!__atomic_load_n(&routes_fast, __ATOMIC_RELAXED)) && routed)
		routes_back();
	thread_reap_late();
	budget_look_around(false);
}

/* The fast path's watermark: what ordinary requests may hold
 * (budget_capacity) less what reservations hold back. */
static void low_wm_set(int64_t reserved_now)
{
	__atomic_store_n(&gfp_budget.low_wm, limit_b - min_free_b - reserved_now, __ATOMIC_RELAXED);
}

/* At start-up, and again when gfp-ctl changes limit= or min_free=. */
void budget_init(int64_t limit)
{
	budget_wait_init();
	/* Under the lock: gfp-ctl may change the limit while requests decide. */
	gfp_lock(&exact_lock);
	limit_b = limit;
	gfp_budget_on = limit_b != 0;
	if (limit_b)
		derive_watermarks();
	gfp_unlock(&exact_lock);
}

int64_t budget_min_free(void)
{
	return min_free_b;
}

static void derive_watermarks(void)
{
	min_free_b = (int64_t)gfp_policy.min_free;
	if (!gfp_policy.set[GFP_K_min_free] || min_free_b == 0) {
		min_free_b = limit_b / 100;
		if (min_free_b < 64 * 1024)
			min_free_b = 64 * 1024;
	}
	if (min_free_b > limit_b / 2)
		min_free_b = limit_b / 2;
	batch = limit_b / 1024;
	if (batch < 4096)
		batch = 4096;
	if (batch > 256 * 1024)
		batch = 256 * 1024;
	low_wm_set(__atomic_load_n(&reserved, __ATOMIC_RELAXED));
	gfp_budget.batch = batch;
	tree_budget_marks(batch, min_free_b);
	void (*marks)(int64_t, int64_t) = __atomic_load_n(&followers.marks, __ATOMIC_RELAXED);
	if (marks)
		marks(limit_b, min_free_b);
	budget_revoke(); /* allowances granted under the old limit go back */
}

/* limit=cgroup: the limit the cgroup leaves the process now (cgroup.c). */
void budget_follow_limit(int64_t limit)
{
	gfp_lock(&exact_lock);
	if (limit_b && limit != limit_b) {
		limit_b = limit;
		derive_watermarks();
	}
	gfp_unlock(&exact_lock);
}

/* Another member changed the tree's limit: the process takes it; never
 * under exact_lock. */
void budget_tree_sync(void)
{
	int64_t limit;
	if (!tree_limit_news(&limit))
		return;
	if (gfp_policy.limit == GFP_SIZE_WORD) {
		/* limit=cgroup: the policy keeps its word, the budget the figure. */
		if (limit > 0)
			budget_follow_limit(limit);
		return;
	}
	if ((uint64_t)limit != gfp_policy.limit) {
		gfp_policy.limit = (uint64_t)limit;
		budget_init(limit);
	}
}

/* Under exact_lock: the fast path sees the lowered watermark at its next
 * call; a request already past its check may overshoot by its batch, the
 * drift the estimate always allows. */
static void reserved_add(int64_t delta)
{
	low_wm_set(__atomic_add_fetch(&reserved, delta, __ATOMIC_RELAXED));
	if (gfp_tree_on)
		tree_reserved_add(delta); /* every member's watermarks */
}

/* Reserved and not drawn: the process's, or the tree's. */
static int64_t reserved_now(void)
{
	return gfp_tree_on ? tree_reserved() : __atomic_load_n(&reserved, __ATOMIC_RELAXED);
}

int64_t budget_limit(void)
{
	return limit_b;
}

/* The most that ordinary requests may ever hold: limit - min_free. */
int64_t budget_capacity(void)
{
	return limit_b - min_free_b;
}

int64_t budget_watermark(gfp_t f)
{
	if (!limit_b)
		return INT64_MAX;
	int64_t r = reserved_now();
	if ((f & GFP_MEMALLOC) && !(f & GFP_NOMEMALLOC))
		return limit_b - r;
	/* Reservations are held back from every request but MEMALLOC; HIGH
	 * reaches into min_free as the kernel's reserves do. */
	int64_t usable = -r;
	if (f & GFP_HIGH) {
		usable += min_free_b / 2; /* ALLOC_MIN_RESERVE halves min */
		if (!(f & GFP_DIRECT_RECLAIM_BIT) && !(f & GFP_NOMEMALLOC))
			usable += min_free_b / 8; /* ALLOC_NON_BLOCK: another quarter of it */
	}
	return limit_b - min_free_b + usable;
}

/* ------------------------------------------------------------------------
 * Exact decisions
 * ---------------------------------------------------------------------- */

/* The lock of a decision near the watermark; in a tree the tree's too, so
 * that two members cannot both take the last bytes. A request of context
 * `f` that may not block (NOWAIT, ATOMIC) only tries the tree's, and is
 * refused (false) while another member holds it; any other takes it before
 * exact_lock, so that its wait (up to 2 s) holds up no thread of this
 * process. */
static bool tree_locked; /* under exact_lock */

static bool exact_enter(gfp_t f)
{
	bool blocks = f & GFP_DIRECT_RECLAIM_BIT;
	bool tree = gfp_tree_on && blocks && tree_lock();
	gfp_lock(&exact_lock);
	if (gfp_tree_on && !blocks && !(tree = tree_trylock())) {
		gfp_unlock(&exact_lock);
		return false;
	}
	tree_locked = tree;
	return true;
}

static void exact_leave(void)
{
	if (tree_locked)
		tree_unlock();
	gfp_unlock(&exact_lock);
}

/* Live bytes as a decision must count them. A tree's other members keep
 * their allowances (a revocation reaches this process's threads only), so
 * what their threads may still take without looking counts as taken: a
 * decision may then pass the watermark by a request, never the limit. */
static int64_t decision_live(void)
{
	int64_t own = budget_process_live(), slack = 0;
	if (!gfp_tree_on)
		return own;
	int64_t live = tree_live(own, &slack);
	return live + slack;
}

enum budget_verdict budget_begin(struct gfp_req *req, gfp_t f, struct budget_exact *x)
{
	struct gfp_thread *t = gfp_tls.thread;
	size_t charge = budget_charge(req->size, req->align);
	if (likely(budget_allowance_take(charge) || budget_fast_ok(t, charge)))
		return BUDGET_FITS;
	if (!req->ctx_resolved) /* near the watermark the flags pick it (HIGH, ATOMIC, MEMALLOC) */
		f = context_resolve(req);

	/* Near the watermark, or larger than a batch: decide exactly, and the
	 * caller allocates under the same lock. */
	size_t want = nallocx(req->size, req->mallocx_flags & ~MALLOCX_ZERO);
	size_t old = req->old ? sallocx(req->old, 0) : 0;
	int64_t grow = (int64_t)want - (int64_t)old;
	budget_look_around(true);
	if (gfp_tree_on)
		budget_tree_sync(); /* a limit another member set: before the lock */
	if (!exact_enter(f)) {
		req->why = GFP_WHY_BUDGET;
		return BUDGET_REFUSED;
	}
	if (t && t->allocp)
		budget_fold(t, budget_own_live(t));
	/* Far from the watermark a large request needs no exact count: the
	 * estimate's slack covers every other thread, and the lock the other
	 * large ones. */
	if (want && (!t || !t->exact_only) && budget_clearly_fits(grow)) {
		x->draw = 0;
		return BUDGET_LOCKED;
	}
	/* Near the watermark no thread may spend a promise made far from it:
	 * every allowance is taken back (they are granted again where there
	 * is room). What a thread already has in flight is one request. */
	budget_revoke();
	int64_t room = budget_watermark(f) - decision_live();
	int64_t draw = t ? reserve_plan_draw(t, req, grow, room) : 0;
	if (grow <= 0 || grow <= room + draw) { /* a shrink needs no room */
		x->draw = draw;
		return BUDGET_LOCKED;
	}
	req->why = GFP_WHY_BUDGET;
	exact_leave();
	return BUDGET_REFUSED;
}

void budget_end(struct gfp_req *req, const struct budget_exact *x, void *p)
{
	struct gfp_thread *t = gfp_tls.thread;
	int64_t draw = p ? x->draw : 0;
	if (draw)
		reserved_add(-reserve_commit_draw(t, draw));
	if (t && t->allocp)
		budget_fold(t, budget_own_live(t));
	exact_leave();
	if (draw)
		reserve_drawn(req, draw);
}

/* ------------------------------------------------------------------------
 * Mappings
 * ---------------------------------------------------------------------- */

/* budget_begin's decision for bytes no allocation counts: nothing to
 * allocate under the lock, the charge is the allocation. */
static bool direct_charge(struct gfp_req *req, gfp_t f)
{
	struct gfp_thread *t = gfp_tls.thread;
	int64_t bytes = (int64_t)req->size;
	bool exact_only = t && t->exact_only;
	bool near = exact_only || !budget_clearly_fits(bytes);
	/* Near the watermark the flags pick it: resolved before any lock
	 * (rules may unwind). */
	if (near && !req->ctx_resolved)
		f = context_resolve(req);
	budget_look_around(near);
	if (gfp_tree_on) {
		budget_tree_sync();
		/* Whether it may wait for the tree's lock. */
		if (!req->ctx_resolved)
			f = context_resolve(req);
	}
	if (!exact_enter(f)) {
		req->why = GFP_WHY_BUDGET;
		return false;
	}
	if (!exact_only && budget_clearly_fits(bytes)) {
		budget_direct_add(bytes);
		exact_leave();
		return true;
	}
	if (!req->ctx_resolved) { /* it came close meanwhile */
		exact_leave();
		return direct_charge(req, context_resolve(req));
	}
	budget_revoke();
	int64_t room = budget_watermark(f) - decision_live();
	int64_t draw = t ? reserve_plan_draw(t, req, bytes, room) : 0;
	bool ok = bytes <= room + draw;
	if (ok) {
		budget_direct_add(bytes);
		if (draw)
			reserved_add(-reserve_commit_draw(t, draw));
	} else {
		req->why = GFP_WHY_BUDGET;
		draw = 0;
	}
	exact_leave();
	if (draw)
		reserve_drawn(req, draw);
	return ok;
}

void *budget_direct_attempt(struct gfp_req *req, gfp_t f)
{
	static char token;
	if (!gfp_budget_on) { /* the limit went while it waited */
		budget_direct_adjust((int64_t)req->size);
		return &token;
	}
	return direct_charge(req, f) ? &token : NULL;
}

/* Takes `bytes` out of every other thread's reach if the watermark of `f`
 * allows it now; 0, or -1 (why = BUDGET). */
int budget_reserve(struct gfp_req *req, gfp_t f, int64_t *left)
{
	int ok = -1;
	if (!exact_enter(f)) {
		req->why = GFP_WHY_BUDGET;
		return -1;
	}
	/* Far from the watermark the estimate's slack covers every allowance
	 * still held; nearer, they are taken back (see budget_begin). */
	if (!budget_clearly_fits((int64_t)req->size))
		budget_revoke();
	if (decision_live() + (int64_t)req->size <= budget_watermark(f)) {
		reserved_add((int64_t)req->size);
		*left += (int64_t)req->size;
		ok = 0;
	} else {
		req->why = GFP_WHY_BUDGET;
	}
	exact_leave();
	return ok;
}

/* Tops `*left` up towards `want` with what fits under the lowest watermark
 * now, without waiting; returns what it took. */
int64_t budget_reserve_upto(int64_t *left, int64_t want)
{
	exact_enter(GFP_KERNEL);
	int64_t room = budget_watermark(GFP_KERNEL) - decision_live();
	int64_t take = want - *left;
	if (take > room)
		take = room;
	if (take > 0) {
		reserved_add(take);
		*left += take;
	} else {
		take = 0;
	}
	exact_leave();
	return take;
}

/* Gives back what is left of a reservation: `*left` becomes 0. */
void budget_unreserve(int64_t *left)
{
	exact_enter(GFP_KERNEL);
	reserved_add(-*left);
	*left = 0;
	exact_leave();
}

int64_t budget_reserved(void)
{
	return reserved_now();
}

/* ------------------------------------------------------------------------
 * Waiting for memory
 * ---------------------------------------------------------------------- */

void budget_waiter_enter(void)
{
	if (gfp_tree_on)
		tree_waiter(1);
	if (__atomic_add_fetch(&gfp_waiters, 1, __ATOMIC_SEQ_CST) == 1 &&
	    (gfp_meaning.free_direct_ok || route_free_switches))
		thread_update_free_direct(); /* frees must wake us now */
}

void budget_waiter_exit(void)
{
	if (gfp_tree_on)
		tree_waiter(-1);
	if (__atomic_sub_fetch(&gfp_waiters, 1, __ATOMIC_SEQ_CST) == 0 &&
	    (gfp_meaning.free_direct_ok || route_free_switches))
		thread_update_free_direct();
}

void budget_atfork_child(void)
{
	/* The child has one thread: only its reservation is still held. */
	struct gfp_thread *self = gfp_tls.thread;
	__atomic_store_n(&reserved, 0, __ATOMIC_RELAXED);
	if (limit_b)
		reserved_add(self ? self->resv_left + self->thread_left : 0);
	pthread_mutex_init(&exact_lock, NULL);
	budget_wait_atfork_child();
	__atomic_store_n(&gfp_waiters, 0, __ATOMIC_RELAXED);
	thread_update_free_direct(); /* nobody waits, no thread is late: free's route */
}
