/*
 * tree.h - tree_state.c, tree.c and tree_oom.c: one budget shared by a
 * process tree (limit.scope=tree), its members, and OOM victims chosen
 * across them.
 *
 * budget.c stays the owner of the budget; in tree mode it asks tree.c for
 * what is no longer the process's own: the shared estimate, the exact sum
 * near the watermark (under the tree's lock), the limit, reservations and
 * the wait queue. Nothing here runs on the fast path: the shared estimate is
 * looked at once per grant of an allowance and updated once per fold.
 */
#ifndef GFP_TREE_H
#define GFP_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decide.h"

#pragma GCC visibility push(hidden)

/* ------------------------------------------------------------------------
 * tree_state.c
 * ---------------------------------------------------------------------- */

/* limit.scope=tree and this process charges the shared budget. */
extern bool gfp_tree_on;

int64_t tree_limit(void);
/* The tree's lock, taken inside the budget's exact_lock: decisions near the
 * watermark in two members do not both take the last bytes. False when it
 * could not be had in time (a member stopped while it held it): the caller
 * goes on without it, and does not unlock. */
bool tree_lock(void);
void tree_unlock(void);
/* The same for a request that may not block (NOWAIT, ATOMIC): false at
 * once while another member (or thread) holds it. */
bool tree_trylock(void);
/* Requests of the tree in its slow path, and their wait queue: a futex in
 * the segment, so that a member that frees wakes another's waiters. */
void tree_waiter(int delta);
uint64_t tree_free_gen(void);
void tree_wake(void);
void tree_wait(uint64_t seen, uint64_t ms);

/* ------------------------------------------------------------------------
 * tree.c
 * ---------------------------------------------------------------------- */

/* At start-up, once the policy is read and before the budget is set up:
 * creates or joins the segment GFP_TREE names (the tree's limit becomes
 * gfp_policy.limit), unless `secure` (secure execution: a setuid program
 * takes no budget from the environment). 0, or -1 with why a GFP_TREE
 * cannot be used in `err` (init.c exits 125 on it, as on a bad policy). */
int tree_init(bool secure, char *err, size_t errlen);
/* The shim's constructor: GFP_TREE into the environment the process's
 * children inherit (not earlier: setenv may be what called malloc first). */
void tree_export_env(void);
/* The fork handler of the child, before the budget's: a member of its own,
 * charged for what it allocates from now on, not for what it inherited
 * (`own`: the process's live bytes, budget_process_live). */
void tree_atfork_child(int64_t own);
/* At exit: the member gives its bytes back. */
void tree_leave(void);
/* At _exit, which skips exit's destructors (dash ends that way, and many a
 * forked child): the same, unless this is a vfork child, whose slot is its
 * parent's. Safe in a signal handler: atomics and system calls. */
void tree_exit(void);

/* The budget's batch (how far each thread may drift) and min_free, as
 * budget.c derives them: tree_clearly_fits and tree_live count with them. */
void tree_budget_marks(int64_t batch, int64_t min_free);
/* budget_clearly_fits in tree mode: the tree's estimate, every member
 * thread's drift and the request stay under the lowest watermark. */
bool tree_clearly_fits(int64_t extra);
/* After a fold: `folded` is the process's estimate now. */
void tree_fold(int64_t folded);
/* The tree's live bytes: the process's `own` (exact) and every other
 * member's last fold; publishes `own`. With `others_slack`, what the other
 * members' threads may still take without looking (two batches each), for
 * a decision that must not pass the limit. */
int64_t tree_live(int64_t own, int64_t *others_slack);
/* Dead members are looked for now, not at most once a millisecond. */
void tree_settle(void);
/* The tree's estimate: every member's charge as of its last fold. */
int64_t tree_estimate(void);
/* Reserved and not drawn, over the whole tree. */
int64_t tree_reserved(void);
void tree_reserved_add(int64_t delta);
/* Another member changed the limit (gfp-ctl set, or limit=cgroup's look at
 * the cgroup) since the process last looked: true with the tree's limit
 * in `limit`, which the process takes (budget_tree_sync). */
bool tree_limit_news(int64_t *limit);
/* limit=cgroup: the cgroup leaves the tree `limit` now; every member takes
 * it. Takes no lock (it may run inside a request that must not block). */
void tree_limit_follow(int64_t limit);
/* limit=cgroup: what the other members charge, as of their last folds. */
int64_t tree_others_charged(void);
/* The tree's memory.events: one more of event `e`; all of them into out
 * (n slots), false when there is no tree. */
void tree_memcg_event(unsigned e);
bool tree_memcg_events(uint64_t *out, unsigned n);
/* gfp-ctl set changed limit= in this member: it becomes the tree's. */
void tree_limit_set(int64_t limit);
struct gfp_buf;
/* The members as the kernel's task dump prints them (for the OOM report),
 * lines after a newline each starting with `prefix`. */
void tree_oom_dump_tasks(struct gfp_buf *b, const char *prefix);

/* ------------------------------------------------------------------------
 * tree_oom.c
 * ---------------------------------------------------------------------- */

struct gfp_slow;
/* oom_badness of a member holding `live` bytes with oom_score_adj `adj` in
 * a tree of `limit`: false when it may never be chosen (-1000). */
bool tree_oom_badness(int64_t live, int adj, int64_t limit, int64_t *points);
/* oom=kill in a tree: the member with the highest badness is killed and
 * its memory waited for (oom.victim_timeout), then the next. `adj`: the
 * requester's oom_score_adj. `memcg`: a memcg OOM (limit=cgroup), whose
 * search for a victim that finds none gives up (OOM_NO_VICTIM) rather than
 * loops; `group` (memory.oom.group): every member is killed with it. */
enum oom_result tree_oom_kill(struct gfp_slow *s, int adj, bool memcg, bool group);

#pragma GCC visibility pop

#endif /* GFP_TREE_H */
