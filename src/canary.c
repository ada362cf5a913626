/*
 * canary.c - the slow path's messages: the retry canary (XFS's "possible
 * memory allocation deadlock"), the allocation-failure report (warn_alloc),
 * and the once-per-call-site misuse warnings for NOFAIL.
 *
 * Each message is one write(2) of a stack buffer, with its backtrace, never
 * allocating and never with a shim lock held. Canaries and failure reports
 * are rate-limited per 10 s window across the process, like printk_ratelimit.
 */
#include <errno.h>
#include <unistd.h>

#include "log.h"
#include "meaning.h"
#include "comm.h"
#include "budget.h"
#include "canary.h"
#include "clock.h"
#include "unwind.h"
#include "records.h"
#include "show_mem.h"

#define WINDOW_NS (10ULL * 1000000000ULL)
#define MSG_MAX   8192
#define FRAMES    24

struct ratelimit {
	uint64_t window_start; /* atomic */
	unsigned count;        /* atomic: messages in this window */
	unsigned missed;       /* atomic: suppressed since the last one printed */
};

static struct ratelimit canary_rl, warn_rl, oom_rl;

/* True when a message may be printed now; *missed gets the suppressed count. */
static bool ratelimit_ok(struct ratelimit *rl, int64_t burst, unsigned *missed)
{
	uint64_t now = gfp_now_ns(), start = __atomic_load_n(&rl->window_start, __ATOMIC_RELAXED);
	if (now - start > WINDOW_NS &&
	    __atomic_compare_exchange_n(&rl->window_start, &start, now, false, __ATOMIC_RELAXED,
	                                __ATOMIC_RELAXED))
		__atomic_store_n(&rl->count, 0, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&rl->count, 1, __ATOMIC_RELAXED) > (unsigned)burst) {
		__atomic_add_fetch(&rl->missed, 1, __ATOMIC_RELAXED);
		return false;
	}
	*missed = __atomic_exchange_n(&rl->missed, 0, __ATOMIC_RELAXED);
	return true;
}

/* "1 round", "5 rounds". */
const char *canary_rounds(unsigned rounds, char *buf, size_t n)
{
	gfp_snprintf(buf, n, "%u round%s", rounds, rounds == 1 ? "" : "s");
	return buf;
}

static void mode_str(gfp_t f, char *buf, size_t n)
{
	char names[128];
	gfp_flags_name(f, names, sizeof(names));
	gfp_snprintf(buf, n, "%s %#x", names, f);
}

unsigned canary_order(size_t size)
{
	size_t pages = size / 4096 + (size % 4096 != 0); /* no wrap near SIZE_MAX */
	unsigned order = 0;
	while (((size_t)1 << order) < pages)
		order++;
	return order;
}

void canary_warn(const struct gfp_slow *s)
{
	unsigned missed = 0;
	if (!ratelimit_ok(&canary_rl, gfp_policy.canary_burst, &missed))
		return;
	struct gfp_frame frames[FRAMES];
	int n = unwind_capture(frames, FRAMES);
	char msg[MSG_MAX], mode[160], caller[96], rounds[32];
	struct gfp_buf b = {msg, sizeof(msg) - 1, 0};
	uint64_t ms = (gfp_now_ns() - s->start_ns) / 1000000;
	if (records_on()) {
		char extra[96];
		gfp_snprintf(extra, sizeof(extra), "\"rounds\":%u,\"ms\":%llu", s->rounds,
		             (unsigned long long)ms);
		record_event("canary", s->req, frames, n, extra);
	}
	mode_str(s->req->gfp, mode, sizeof(mode));
	if (missed)
		gfp_buf_printf(&b, "gfpshim: warning: %u canary warnings suppressed\n", missed);
	gfp_buf_printf(
	    &b,
	    "gfpshim: warning: %s(%d) possible memory allocation deadlock size %zu in %s "
	    "after %s, %llu.%llus (mode:%s)",
	    gfp_comm(), (int)getpid(), s->req->size,
	    unwind_caller(frames, n, caller, sizeof(caller)),
	    canary_rounds(s->rounds, rounds, sizeof(rounds)), (unsigned long long)(ms / 1000),
	    (unsigned long long)(ms % 1000 / 100), mode);
	unwind_format(&b, frames, n);
	msg[b.len++] = '\n';
	gfp_log_raw(msg, b.len);
}

void canary_tick(struct gfp_slow *s)
{
	bool due = s->rounds % (unsigned)gfp_policy.canary_retries == 0;
	if (gfp_policy.canary_ms) {
		uint64_t elapsed_ms = (gfp_now_ns() - s->start_ns) / 1000000;
		if (elapsed_ms >= s->next_canary_ms) {
			due = true;
		}
	}
	if (!due)
		return;
	canary_warn(s);
	s->next_canary_ms = (gfp_now_ns() - s->start_ns) / 1000000 + gfp_policy.canary_ms;
}

/* The OOM report of a request that goes on (oom=fail; a NOFAIL or an
 * oom_score_adj -1000 request that keeps looping) prints at most warn.burst
 * times a window, as the kernel rate-limits its OOM header; *missed gets
 * the reports suppressed since the last one printed. */
bool canary_oom_report_ok(unsigned *missed)
{
	return ratelimit_ok(&oom_rl, gfp_policy.warn_burst, missed);
}

void canary_warn_alloc(const struct gfp_slow *s, const char *reason)
{
	static const char prefix[] = "gfpshim: warning: ";
	if (s->req->gfp & GFP_NOWARN)
		return;
	unsigned missed = 0;
	if (!ratelimit_ok(&warn_rl, gfp_policy.warn_burst, &missed))
		return;
	struct gfp_frame frames[FRAMES];
	int n = unwind_capture(frames, FRAMES);
	char msg[MSG_MAX], mode[160], rounds[32];
	struct gfp_buf b = {msg, sizeof(msg) - 1, 0};
	mode_str(s->req->gfp, mode, sizeof(mode));
	if (missed)
		gfp_buf_printf(&b, "%swarn_alloc: %u callbacks suppressed\n", prefix, missed);
	gfp_buf_printf(&b, "%s%s(%d): allocation failure: size:%zu order:%u, mode:%s: %s (%s%s)",
	               prefix, gfp_comm(), (int)getpid(), s->req->size, canary_order(s->req->size),
	               mode, reason, s->rounds ? "after " : "before any reclaim",
	               s->rounds ? canary_rounds(s->rounds, rounds, sizeof(rounds)) : "");
	unwind_format(&b, frames, n);
	show_mem(&b, prefix);
	msg[b.len++] = '\n';
	gfp_log_raw(msg, b.len);
}

/* ------------------------------------------------------------------------
 * Once per call site: a small open-addressed set of (site, kind).
 * ---------------------------------------------------------------------- */
#define SITES 512
static uintptr_t warned[SITES]; /* atomic */

static bool first_time(uintptr_t key)
{
	for (unsigned i = 0; i < SITES; i++) {
		uintptr_t *slot = &warned[(key + i) % SITES], cur = 0;
		if (__atomic_compare_exchange_n(slot, &cur, key, false, __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED))
			return true;
		if (cur == key)
			return false;
	}
	return false; /* the set is full: stay quiet rather than flood */
}

/* Each kind once per call site, as each of the kernel's WARN_ON_ONCE is
 * once per boot: NOFAIL without direct reclaim (it may fail), above 8 KiB
 * (costly to guarantee), from inside reclaim (it cannot reclaim, it can only
 * wait for others: __alloc_pages_slowpath's PF_MEMALLOC warning), and inside
 * a scope that takes direct reclaim away (it waits anyway). */
void canary_misuse(const struct gfp_slow *s, bool in_reclaim, bool scope_waived)
{
	gfp_t f = s->req->gfp;
	if (!(f & GFP_NOFAIL))
		return;
	bool large = s->req->size > 8192, nowait = !(f & GFP_DIRECT_RECLAIM_BIT);
	if (!large && !nowait && !in_reclaim && !scope_waived)
		return;
	struct gfp_frame frames[FRAMES];
	int n = unwind_capture(frames, FRAMES);
	uintptr_t site = n ? frames[0].ip : 0;
	bool warn[4] = {nowait && first_time((site << 3) | 1), large && first_time((site << 3) | 2),
	                in_reclaim && first_time((site << 3) | 3),
	                scope_waived && first_time((site << 3) | 4)};
	if (!warn[0] && !warn[1] && !warn[2] && !warn[3])
		return;
	char msg[MSG_MAX], mode[160], buf[96];
	struct gfp_buf b = {msg, sizeof(msg) - 1, 0};
	mode_str(f, mode, sizeof(mode));
	const char *caller = unwind_caller(frames, n, buf, sizeof(buf)), *sep = "";
#define MISUSE(i, fmt)                                                                             \
	if (warn[i]) {                                                                             \
		gfp_buf_printf(&b, "%sgfpshim: warning: %s(%d): " fmt, sep, gfp_comm(),            \
		               (int)getpid(), s->req->size, caller, mode);                         \
		sep = "\n";                                                                        \
	}
	MISUSE(0, "NOFAIL without direct reclaim cannot wait: size %zu in %s may fail (mode:%s)")
	MISUSE(1, "NOFAIL allocation of %zu bytes (above 8192) in %s: large must-succeed requests "
	          "can stall the process (mode:%s)")
	MISUSE(2, "NOFAIL from inside reclaim (a shrinker or an OOM notifier) cannot reclaim: "
	          "size %zu in %s waits until other threads free memory (mode:%s)")
	MISUSE(3, "NOFAIL inside a scope without direct reclaim waits anyway: size %zu in %s "
	          "(mode:%s)")
#undef MISUSE
	unwind_format(&b, frames, n);
	msg[b.len++] = '\n';
	gfp_log_raw(msg, b.len);
}
