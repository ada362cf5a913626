#!/bin/bash
# Nesting adds: 1M then 2M (NORETRY) hold back 3M from the other threads,
# and 10M then 10M more of 16M fails the second at once (it could never be
# granted, even NOFS; under wait=600s a wait would outlast the run's
# deadline);
# one gfp_unreserve gives back all, a second one nothing more. A thread that
# reserves 2M, uses and frees half of it and exits without gfp_unreserve
# gives it back too. Both modes, and watermark with GFP_REPORT; the fills
# are compared within one block.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

for m in watermark tokens watermark_r; do
	r=0
	[ $m = watermark_r ] && r=1
	RS_REPORT=$r rs_run $m "limit=16M;wait=600s;retries=2;oom=fail;reserve.mode=${m%_r}" "$TXN" nest
	rs_load $m
	declare -n base=${m}_base nested=${m}_nested un=${m}_unreserved
	declare -n un2=${m}_unreserved_twice exited=${m}_thread_exited
	want $m "nested reservations refused" "${m}_outer_rc == 0 && ${m}_inner_rc == 0"
	want $m "nested 1M + 2M held back $(((base - nested) * 4096)) bytes, expected 3M" \
		"base - nested >= 767 && base - nested <= 769"
	for v in un un2 exited; do
		want $m "$v: fill ${!v} after giving back, before $base" \
			"${!v} - base <= 1 && base - ${!v} <= 1"
	done
	want $m "the exiting thread's reservation failed" "${m}_thread_rc == 0"
	want $m "10M then 10M more of 16M: the second fails (ENOMEM), the first holds" \
		"${m}_half_rc == 0 && ${m}_over_rc == -1 && ${m}_over_errno == 12"
	[ $m = watermark_r ] && want $m "report: taken 4, reserved_now 0" \
		"$(rs_report $m taken) == 4 && $(rs_report $m reserved_now) == 0"
	note "$m: fill $base blocks; nested 1M+2M: $nested; after unreserve: $un; after a thread exited holding 2M: $exited"
done
