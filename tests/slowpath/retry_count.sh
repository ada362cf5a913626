#!/bin/bash
# How long the slow path retries, and what NOFAIL may take, as
# should_reclaim_retry and __alloc_pages_slowpath have it:
# * retries=N rounds without progress are retried, the next one gives up
#   (the count is incremented before it is compared): with retries=4 a
#   RETRY_MAYFAIL request fails, and a KERNEL one reaches the OOM step, in
#   round 5 (it was round 4);
# * it gives up at once when everything reclaimable could not reach the
#   watermark: a shrinker that frees less than it is asked is spent, so a
#   KERNEL request under a full budget reaches the OOM step in round 1,
#   although that shrinker frees a block every round (before, that was
#   progress: it looped until enough blocks were freed);
# * after the OOM step a NOFAIL request ignores the watermarks: with only
#   the part of the reserve that MEMALLOC may take left, KERNEL|NOFAIL
#   succeeds at once under oom=fail (before, it tried with HIGH's watermark
#   for ever, until the program's deadline freed memory).
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
source "$TESTS/slowpath/nf.sh"

# Every attempt injected (no budget, nothing to reclaim, no early stop).
INJ='fail.probability=1;fail.where=attempt;retries=4;wait=1ms;oom=fail;warn.burst=1000'
for flags in 'KERNEL|RETRY_MAYFAIL' KERNEL; do
	tag=count-${flags//|/-}
	sp_run $tag "$INJ" --flags "$flags" --size 4096 --source none
	sp_expect_result $tag 0 null 0
	expect_contains "$tag: failed in round 5" "$TMP/$tag.log" \
		"^gfpshim: warning: sp_case\\([0-9]+\\): allocation failure: size:4096 order:0, mode:${flags//|/\\|} 0x[0-9a-f]+: .* \\(after 5 rounds\\)\$"
done
note "retries=4: RETRY_MAYFAIL failed, KERNEL reached the OOM step, in round 5"

# nf TAG POLICY ARGS...: nf_run, which must exit 0.
nf() {
	nf_run "$@"
	[ "$SP_RC" = 0 ] || { sp_show "$1"; fail "$1: status $SP_RC"; }
}

nf spent 'limit=8M;wait=5ms;oom=fail' spent
grep -qE '^result=null thread=0 freed=0 ' "$TMP/spent.out" ||
	{ cat "$TMP/spent.out" "$TMP/spent.log" >&2; fail "spent: expected NULL before the deadline"; }
expect_contains "spent: OOM step in round 1" "$TMP/spent.log" \
	'^gfpshim: warning: sp_nofail\([0-9]+\): allocation failure: size:4096 order:0, mode:KERNEL 0xcc0: the OOM step gave up \(oom=fail\) \(after 1 round\)$'
note "a spent shrinker: the OOM step came in round 1"

for oom in fail wait; do
	nf highroom-$oom "limit=8M;wait=5ms;oom=$oom" highroom
	grep -qE '^result=ok thread=0 freed=0 ' "$TMP/highroom-$oom.out" ||
		{ cat "$TMP/highroom-$oom.out" "$TMP/highroom-$oom.log" >&2; fail "highroom-$oom: NOFAIL did not get the reserve past HIGH's watermark"; }
	sp_no_match "highroom-$oom: OOM kill" "$TMP/highroom-$oom.log" 'invoked oom-killer'
done
note "KERNEL|NOFAIL took what only no-watermark requests may take, after the OOM step"
