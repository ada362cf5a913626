/*
 * kswapd.c - background reclaim, the kernel's kswapd: one thread, made at
 * its first wake-up (live bytes past the low watermark, or a request that
 * enters the slow path), that purges jemalloc's dirty pages and calls the
 * registered shrinkers until live bytes are back under the high watermark,
 * so that fewer requests stall in direct reclaim.
 *
 * Watermarks in the budget's terms (free = limit - live): min is min_free,
 * where ordinary requests stop; low = min + D and high = min + 2D, with
 * D = max(min/4, limit * kswapd.scale / 10000): the kernel's
 * __setup_per_zone_wmarks and its watermark_scale_factor: kswapd is woken
 * below low and reclaims to high). It is woken where the budget looks (an
 * allowance grant past low) and, as wakeup_kswapd is from
 * wake_all_kswapds, on every entry into the slow path and each of its
 * rounds, unless the budget is balanced (under high). As balance_pgdat
 * does, a run keeps reclaiming while its rounds make progress and ends
 * after 12 rounds without (DEF_PRIORITY); 16 runs in a row that reclaimed
 * nothing make it hopeless (kswapd_failures >= MAX_RECLAIM_RETRIES): it is
 * woken no more until a round of direct reclaim makes progress again
 * (shrink_node resets kswapd_failures), so that a budget full of what
 * nobody can free does not keep it spinning.
 *
 * The thread is the program's guest. It is registered as a program thread
 * is, so that what its shrinkers free counts; but it takes no thread
 * reserve, is not in the thread count, never takes a signal (all blocked),
 * and runs as the kernel's kswapd does, PF_MEMALLOC: its allocations may use
 * the reserves and never enter reclaim or wait, so it cannot deadlock on the
 * budget. It is made with libc's pthread_create, not the shim's wrapper, so
 * that the program's threads keep their creation order (fail.seed). fork
 * and exit wait for its round to end (at most 200 ms), so that a child and
 * the exit handlers never find a shrinker of it halfway; a child makes its
 * own thread when it needs one.
 *
 * With kswapd.psi=1 it also listens to the kernel's pressure stall
 * information: a trigger "some 150000 1000000" (150 ms of stalls in a
 * second) on the cgroup's memory.pressure, else /proc/pressure/memory; a
 * process without CAP_SYS_RESOURCE may only arm windows of whole 2 s, so
 * "some 300000 2000000" (the same share) is the fallback. Looked at every
 * 250 ms while the thread sleeps; each event is one round of reclaim
 * whatever the watermarks say.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "clock.h"
#include "fd.h"
#include "cgroup.h"
#include "kswapd.h"
#include "vmstat.h"
#include "budget_wait.h"

bool gfp_kswapd_on;

enum ks_state {
	KS_NONE,     /* no thread in this process */
	KS_SLEEPING, /* waiting for a wake */
	KS_WOKEN,    /* woken, not running yet */
	KS_RUNNING,  /* reclaiming */
	KS_FAILED,   /* it could not be made: reclaim stays direct */
};

#define MAX_FAILURES   16 /* MAX_RECLAIM_RETRIES: runs without progress, then hopeless */
#define DEF_PRIORITY   12 /* rounds without progress that end a run */
#define IDLE_NS        (10 * 1000000ULL) /* woken for nothing: a pause of the grants' wakes */
#define PSI_LOOK_MS    250
#define ROUND_WAIT_MS  200
#define KSWAPD_STACK   (1u << 20)
#define PSI_TRIGGER    "some 150000 1000000"
#define PSI_TRIGGER_2S "some 300000 2000000" /* without CAP_SYS_RESOURCE */

static int state;            /* atomic: enum ks_state */
static int creating;         /* atomic: a thread is making it */
static bool stopped;         /* atomic: the process exits */
static bool fork_pending;    /* atomic: a fork waits for the round */
static bool round_held;      /* the forking thread holds round_lock */
static int64_t wake_live;    /* atomic: woken when the estimate passes it */
static int64_t high_live;    /* atomic: reclaims until live is under it */
static uint64_t quiet_until; /* atomic: the grants' wakes ignored until then */
static unsigned failures;    /* atomic: runs in a row that reclaimed nothing (kswapd_failures) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t round_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static create_fn real_create;

/* The PSI trigger, and which file it is (the program may close the fd). */
static int psi_fd = -1;
static bool psi_tried;
static dev_t psi_dev;
static ino_t psi_ino;

void kswapd_marks(int64_t limit, int64_t min_free)
{
	int64_t d = min_free / 4, scaled = limit / 10000 * gfp_policy.kswapd_scale;
	if (scaled > d)
		d = scaled;
	int64_t low = min_free + d, high = min_free + 2 * d;
	if (high > limit)
		high = limit;
	if (low > high)
		low = high;
	__atomic_store_n(&wake_live, limit - low, __ATOMIC_RELAXED);
	__atomic_store_n(&high_live, limit - high, __ATOMIC_RELAXED);
	__atomic_store_n(&gfp_kswapd_on, gfp_policy.kswapd, __ATOMIC_RELAXED);
}

void kswapd_watermarks(int64_t *wake, int64_t *high)
{
	*wake = __atomic_load_n(&wake_live, __ATOMIC_RELAXED);
	*high = __atomic_load_n(&high_live, __ATOMIC_RELAXED);
}

/* `ms` from now on CLOCK_REALTIME, the clock of timedlock and of a
 * default condition variable (a clock step only moves a short wait). */
static struct timespec deadline(unsigned ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

static bool lock_within(pthread_mutex_t *m, unsigned ms)
{
	struct timespec ts = deadline(ms);
	return pthread_mutex_timedlock(m, &ts) == 0;
}

/* ------------------------------------------------------------------------
 * PSI
 * ---------------------------------------------------------------------- */

/* Arms a trigger on `path`, the 1 s window first; *trigger says which. */
static int psi_arm(const char *path, int *err, const char **trigger)
{
	static const char *const triggers[] = {PSI_TRIGGER, PSI_TRIGGER_2S};
	for (unsigned i = 0; i < 2; i++) {
		int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			*err = errno;
			return -1;
		}
		if (write(fd, triggers[i], strlen(triggers[i]) + 1) >= 0) {
			*trigger = triggers[i];
			return gfp_fd_lift(fd); /* out of the program's way */
		}
		*err = errno;
		close(fd);
	}
	return -1;
}

/* Whether psi_fd still is the trigger this thread armed. */
static bool psi_ours(void)
{
	struct stat st;
	return psi_fd >= 0 && fstat(psi_fd, &st) == 0 && st.st_dev == psi_dev &&
	       st.st_ino == psi_ino;
}

/* Arms the trigger when kswapd.psi is (or became) 1; lets it go when it
 * or kswapd was set to 0 (gfp-ctl). */
static void psi_update(void)
{
	if (!gfp_policy.kswapd_psi || !__atomic_load_n(&gfp_kswapd_on, __ATOMIC_RELAXED)) {
		if (psi_ours())
			close(psi_fd);
		psi_fd = -1;
		psi_tried = false;
		return;
	}
	if (psi_tried)
		return;
	psi_tried = true;
	char cg[512] = "", q[2][2048];
	int cg_err = ENOENT, proc_err = 0;
	const char *path = "/proc/pressure/memory", *trigger = "";
	if (cgroup_pressure_file(cg, sizeof(cg)) && (psi_fd = psi_arm(cg, &cg_err, &trigger)) >= 0)
		path = cg;
	else
		psi_fd = psi_arm(path, &proc_err, &trigger);
	struct stat st;
	if (psi_fd >= 0 && fstat(psi_fd, &st) == 0) {
		psi_dev = st.st_dev;
		psi_ino = st.st_ino;
		if (gfp_policy.confirm)
			gfp_log(GFP_LOG_INFO, "kswapd.psi: trigger '%s' on %s", trigger,
			        gfp_quote(q[0], sizeof(q[0]), path, strlen(path)));
		return;
	}
	gfp_log(GFP_LOG_WARNING,
	        "kswapd.psi: the kernel offers no memory pressure trigger (%s: %s; "
	        "/proc/pressure/memory: %s): kswapd wakes on the budget's low watermark only",
	        cg[0] ? gfp_quote(q[1], sizeof(q[1]), cg, strlen(cg)) : "cgroup v2 memory.pressure",
	        gfp_strerror(cg_err), gfp_strerror(proc_err));
}

/* A pressure event since the last look (POLLPRI, kept by the kernel until
 * polled). */
static bool psi_fired(void)
{
	struct pollfd p = {psi_fd, POLLPRI, 0};
	if (poll(&p, 1, 0) != 1)
		return false;
	if ((p.revents & (POLLERR | POLLNVAL)) || !psi_ours()) {
		psi_fd = -1; /* the program closed it: no more triggers */
		return false;
	}
	if (!(p.revents & POLLPRI))
		return false;
	vmstat_add(&gfp_vmstat.psi_events, 1);
	return true;
}

/* ------------------------------------------------------------------------
 * The thread
 * ---------------------------------------------------------------------- */

/* Sleeps until woken (true) or a PSI event (false). */
static bool sleep_until_work(void)
{
	for (;;) {
		psi_update();
		bool woken;
		gfp_lock(&lock);
		if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != KS_WOKEN) {
			if (psi_fd < 0) {
				pthread_cond_wait(&cond, &lock);
			} else {
				struct timespec ts = deadline(PSI_LOOK_MS);
				pthread_cond_timedwait(&cond, &lock, &ts);
			}
		}
		woken = __atomic_load_n(&state, __ATOMIC_ACQUIRE) == KS_WOKEN;
		if (woken)
			__atomic_store_n(&state, KS_RUNNING, __ATOMIC_RELEASE);
		gfp_unlock(&lock);
		if (woken)
			return true;
		int s = KS_SLEEPING;
		if (psi_fd >= 0 && psi_fired() &&
		    __atomic_compare_exchange_n(&state, &s, KS_RUNNING, false, __ATOMIC_ACQ_REL,
		                                __ATOMIC_RELAXED))
			return false;
	}
}

static bool hopeless(void)
{
	return __atomic_load_n(&failures, __ATOMIC_RELAXED) >= MAX_FAILURES;
}

/* Rounds of reclaim until live bytes are under the high watermark; one
 * round at least for a PSI event. */
static void balance(bool psi)
{
	struct gfp_thread *self = gfp_tls.thread;
	unsigned idle = 0, rounds = 0;
	size_t total = 0;
	while (!__atomic_load_n(&stopped, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&fork_pending, __ATOMIC_RELAXED)) {
		cgroup_after_reclaim(); /* the cgroup's figures now (limit=cgroup) */
		int64_t live = budget_live(), high = __atomic_load_n(&high_live, __ATOMIC_RELAXED);
		if (live <= high && !(psi && rounds == 0))
			break;
		size_t want = live > high ? (size_t)(live - high) : (size_t)budget_min_free();
		size_t freed = reclaim_run(GFP_KERNEL, want, true);
		if (self)
			budget_after_free(self); /* the estimate sees what it freed */
		cgroup_after_reclaim();
		if (__atomic_load_n(&gfp_waiters, __ATOMIC_SEQ_CST))
			budget_wait_wake();
		rounds++;
		total += freed;
		vmstat_add(&gfp_vmstat.kswapd_rounds, 1);
		vmstat_add(&gfp_vmstat.kswapd_freed, freed);
		if (!freed && ++idle >= DEF_PRIORITY)
			break; /* priority 0: the run ends */
	}
	if (!rounds) {
		/* The estimate ran ahead of the exact count. */
		__atomic_store_n(&quiet_until, gfp_now_ns() + IDLE_NS, __ATOMIC_RELAXED);
	} else if (total) {
		__atomic_store_n(&failures, 0, __ATOMIC_RELAXED);
	} else if (__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED) == MAX_FAILURES) {
		vmstat_add(&gfp_vmstat.kswapd_hopeless, 1);
	}
}

static void *kswapd_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "gfp-kswapd");
	gfp_tls.shim_thread = 1; /* thread.c: no reserve, not in the count */
	thread_enter(true);
	gfp_tls.in_reclaim = 1; /* PF_MEMALLOC, for good */
	for (;;) {
		bool woken = sleep_until_work();
		pthread_mutex_lock(&round_lock);
		balance(!woken);
		pthread_mutex_unlock(&round_lock);
		__atomic_store_n(&state, KS_SLEEPING, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* At exit: no shrinker of the program runs once its exit handlers (and
 * the destructors of the caches they shrink) do. Registered at the first
 * thread's making, after the program's own statics: it runs before them. */
static void kswapd_stop(void)
{
	__atomic_store_n(&stopped, true, __ATOMIC_RELAXED);
	if (__atomic_load_n(&state, __ATOMIC_RELAXED) != KS_NONE)
		(void)lock_within(&round_lock, ROUND_WAIT_MS); /* held for good */
}

/* Makes the thread, from a request that holds no lock of the shim. */
static bool create(void)
{
	static bool exit_hook;
	if (!__atomic_load_n(&gfp_main_started, __ATOMIC_ACQUIRE) ||
	    __atomic_exchange_n(&creating, 1, __ATOMIC_ACQUIRE))
		return false;
	bool ok = false;
	gfp_tls.guard++; /* what libc allocates for it goes to jemalloc alone */
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != KS_NONE)
		goto out; /* made meanwhile */
	if (!real_create) {
		void *sym = dlsym(RTLD_NEXT, "pthread_create");
		memcpy(&real_create, &sym, sizeof(real_create));
	}
	int r = ENOSYS;
	if (real_create) {
		sigset_t all, old;
		sigfillset(&all);
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, KSWAPD_STACK);
		pthread_t tid;
		/* The thread inherits the mask: no signal of the program ever
		 * runs its handler there. */
		pthread_sigmask(SIG_SETMASK, &all, &old);
		__atomic_store_n(&state, KS_SLEEPING, __ATOMIC_RELEASE);
		r = real_create(&tid, &a, kswapd_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&a);
	}
	if (r != 0) {
		__atomic_store_n(&state, KS_FAILED, __ATOMIC_RELEASE);
		gfp_log(GFP_LOG_WARNING,
		        "kswapd: cannot start the background reclaim thread (%s): requests reclaim "
		        "directly",
		        gfp_strerror(r));
		goto out;
	}
	if (!exit_hook)
		exit_hook = atexit(kswapd_stop) == 0;
	ok = true;
out:
	gfp_tls.guard--;
	__atomic_store_n(&creating, 0, __ATOMIC_RELEASE);
	return ok;
}

static void wake(void)
{
	int s = KS_SLEEPING;
	if (!__atomic_compare_exchange_n(&state, &s, KS_WOKEN, false, __ATOMIC_ACQ_REL,
	                                 __ATOMIC_RELAXED))
		return; /* running, woken already, or none */
	vmstat_add(&gfp_vmstat.kswapd_wake, 1);
	gfp_lock(&lock);
	pthread_cond_signal(&cond);
	gfp_unlock(&lock);
}

void kswapd_check(void)
{
	if (!__atomic_load_n(&gfp_kswapd_on, __ATOMIC_RELAXED))
		return;
	int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
	if (s != KS_NONE && s != KS_SLEEPING)
		return;
	/* With kswapd.psi the thread listens from the first look on. */
	bool listen = s == KS_NONE && gfp_policy.kswapd_psi;
	if (!listen && budget_estimate() <= __atomic_load_n(&wake_live, __ATOMIC_RELAXED))
		return;
	if (__atomic_load_n(&stopped, __ATOMIC_RELAXED) || (!listen && hopeless()) ||
	    gfp_now_ns() < __atomic_load_n(&quiet_until, __ATOMIC_RELAXED))
		return;
	if (s == KS_NONE && !create())
		return;
	if (!listen)
		wake();
}

void kswapd_wake_all(gfp_t f)
{
	if (!(f & GFP_KSWAPD_RECLAIM_BIT) || !__atomic_load_n(&gfp_kswapd_on, __ATOMIC_RELAXED))
		return;
	int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
	if ((s != KS_NONE && s != KS_SLEEPING) || __atomic_load_n(&stopped, __ATOMIC_RELAXED))
		return;
	/* wakeup_kswapd: not for a hopeless node, nor a balanced one. */
	if (hopeless() || budget_estimate() <= __atomic_load_n(&high_live, __ATOMIC_RELAXED))
		return;
	if (s == KS_NONE && !create())
		return;
	wake();
}

void kswapd_direct_reclaimed(size_t freed)
{
	if (freed && __atomic_load_n(&failures, __ATOMIC_RELAXED))
		__atomic_store_n(&failures, 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * fork
 * ---------------------------------------------------------------------- */

void kswapd_atfork_prepare(void)
{
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == KS_NONE)
		return;
	__atomic_store_n(&fork_pending, true, __ATOMIC_RELAXED);
	round_held = lock_within(&round_lock, ROUND_WAIT_MS);
}

void kswapd_atfork_parent(void)
{
	if (round_held)
		pthread_mutex_unlock(&round_lock);
	round_held = false;
	__atomic_store_n(&fork_pending, false, __ATOMIC_RELAXED);
}

/* The child has no thread: it makes one when it passes low itself. The
 * parent's trigger is the parent's (a shared file description). */
void kswapd_atfork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	pthread_mutex_init(&round_lock, NULL);
	pthread_cond_init(&cond, NULL);
	round_held = false;
	__atomic_store_n(&fork_pending, false, __ATOMIC_RELAXED);
	__atomic_store_n(&state, KS_NONE, __ATOMIC_RELAXED);
	__atomic_store_n(&creating, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&quiet_until, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&failures, 0, __ATOMIC_RELAXED);
	if (psi_ours())
		close(psi_fd);
	psi_fd = -1;
	psi_tried = false;
}
