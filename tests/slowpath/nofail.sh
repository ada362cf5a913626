#!/bin/bash
# NOFAIL waits, it is never failed and, with NORETRY or RETRY_MAYFAIL, never
# meets the OOM killer (the kernel's nopage retries them with
# ALLOC_MIN_RESERVE); it waits inside reclaim (a shrinker's or a notifier's
# own request) and inside a NOWAIT scope too. Each waiting request is freed
# for only once the record stream shows a canary of every requester thread
# (it is seen looping, past the rounds where the OOM step would have come),
# then it must succeed: exit 0, no OOM report. One and several threads.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
source "$TESTS/slowpath/nf.sh"
POL='limit=8M;retries=4;wait=5ms;canary.retries=8;canary.burst=1000'

# nf_waited TAG N INNER: N requesters each got memory after the free, which
# came after each was seen looping; exit 0; no OOM report, kill or record.
nf_waited() {
	local tag=$1 n=$2 inner=$3 want
	want="^result=ok thread=[0-9]+ freed=1 seen=1 inner=$inner\$"
	[ "$SP_RC" = 0 ] && [ "$(grep -cE "$want" "$TMP/$tag.out")" = "$n" ] || {
		sp_show "$tag"
		fail "$tag: expected $n lines /$want/ and status 0"
	}
	sp_no_match "$tag: OOM report" "$TMP/$tag.log" 'invoked oom-killer|Killed process'
	sp_no_match "$tag: oom record" "$TMP/$tag.rec" '"event":"oom"'
	sp_no_match "$tag: failure report" "$TMP/$tag.log" 'allocation failure'
}

# NORETRY|NOFAIL and RETRY_MAYFAIL|NOFAIL: before, the OOM step after
# retries=4 rounds killed the process (status 137).
for flags in 'KERNEL|NOFAIL|NORETRY' 'KERNEL|NOFAIL|RETRY_MAYFAIL'; do
	for n in 1 4; do
		tag=req-${flags//|/-}-$n
		nf_run "$tag" "$POL" request --threads $n --flags "$flags"
		nf_waited "$tag" $n none
	done
	note "$flags: 1 and 4 threads waited for the free, no OOM step"
done

# NOFAIL from inside reclaim: a shrinker's own NOFAIL request, once the
# budget is full, waits (it got NULL at once before), warned once per call
# site; several threads in the shrinker at once each wait.
for n in 1 3; do
	nf_run reclaim-$n "$POL" reclaim --threads $n
	nf_waited reclaim-$n $n ok
	expect_eq "reclaim-$n: 'from inside reclaim' warnings (one call site)" 1 \
		"$(grep -cE '^gfpshim: warning: sp_nofail\([0-9]+\): NOFAIL from inside reclaim .* in inner_nofail ' "$TMP/reclaim-$n.log")"
done
note "a shrinker's NOFAIL waited in 1 and 3 threads at once"

# NOFAIL from an OOM notifier, which holds the OOM step: the other threads
# find it busy, count that as progress and wait; nobody is killed.
for n in 1 2; do
	nf_run notifier-$n "$POL" notifier --threads $n
	nf_waited notifier-$n $n ok
done
note "a notifier's NOFAIL waited; the other thread's OOM step found it busy"

# A NOWAIT scope does not make NOFAIL fail: it waits, warned once.
for n in 1 2; do
	nf_run scope-$n "$POL" scope --threads $n --flags 'KERNEL|NOFAIL'
	nf_waited scope-$n $n none
	expect_eq "scope-$n: 'inside a scope' warnings" 1 \
		"$(grep -cE '^gfpshim: warning: sp_nofail\([0-9]+\): NOFAIL inside a scope without direct reclaim waits anyway' "$TMP/scope-$n.log")"
done
# ... and a plain request inside it still fails at once.
nf_run scope-plain "$POL" scope --flags KERNEL
grep -qE '^result=null thread=0 freed=0 ' "$TMP/scope-plain.out" ||
	{ sp_show scope-plain; fail "scope-plain: a KERNEL request in a NOWAIT scope did not fail at once"; }
note "NOFAIL in a NOWAIT scope waited; KERNEL in it failed at once"
