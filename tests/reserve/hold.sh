#!/bin/bash
# The transaction (txn hold) in both modes. The worker reserves R = 4M,
# allocates X = 1M while the budget has room, then another thread fills the
# budget to its watermark and three keep asking (NOWAIT, every 1 ms) while
# the worker's transaction allocates 4K KERNEL blocks until one fails.
#   watermark: X came from the budget and the reserve is whole: the
#     transaction gets all of R, none of its requests fails or waits (under
#     wait=600s a wait would outlast the run's deadline), and the others are
#     held back by R + X;
#   tokens: X was drawn from the reserve: the transaction fails after R - X,
#     and the others are held back by R.
# In both modes the asking threads get nothing while the budget is held,
# and after the unreserve another thread fills exactly as much as before
# the reservation (within one block). Each mode runs twice: on the plain
# fast path, and with GFP_REPORT (stats, and the report's reserve fields).
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

pol='limit=16M;wait=600s;retries=2;oom=fail'
rb=1024 xb=256 # R and X in blocks of 4096

# check TAG MODE: the assertions on one run's output.
check() {
	local tag=$1 mode=$2
	rs_load $tag
	declare -n base=${tag}_base held=${tag}_held after=${tag}_after in_ok=${tag}_in_ok
	declare -n in_null=${tag}_in_null pre_ok=${tag}_pre_ok
	declare -n hammer_got=${tag}_hammer_got hammer_tries=${tag}_hammer_tries
	declare -n fail_ms=${tag}_in_fail_ms
	local hold=$((base - held))
	want $tag "the reservation was refused" "${tag}_reserve_rc == 0"
	want $tag "X before the others filled the budget: $pre_ok blocks" "pre_ok == xb"
	want $tag "the transaction should end in one failure past the reservation" "in_null == 1"
	want $tag "another thread got memory while the budget was held" \
		"hammer_got == 0 && hammer_tries > 0"
	want $tag "bytes of the reservation stayed held after the unreserve: fill $after vs $base" \
		"after - base <= 1 && base - after <= 1"
	if [ $mode = watermark ]; then
		want $tag "the transaction got $in_ok blocks, not all of R ($rb)" \
			"in_ok >= rb - 1 && in_ok <= rb + 1"
		# The request past it went through its round: nothing was left
		# to reclaim, so should_reclaim_retry gave up in round 1.
		grep -qE ': allocation failure: size:4096 order:0, mode:KERNEL 0xcc0: .* \(after 1 round\)$' \
			"$TMP/$tag.log" || want $tag "the request past the reservation failed after $fail_ms ms, without its round" 0
		want $tag "held back by $((hold * 4096)), not R + X" "hold >= rb + xb - 1 && hold <= rb + xb + 1"
	else
		want $tag "the transaction got $in_ok blocks, not R - X ($((rb - xb)))" \
			"in_ok >= rb - xb - 2 && in_ok <= rb - xb + 1"
		want $tag "held back by $((hold * 4096)), not R" "hold >= rb - 1 && hold <= rb + 1"
	fi
	printf -v "${tag}_hold" '%s' $hold
}

for m in watermark tokens; do
	rs_run $m "$pol;reserve.mode=$m" "$TXN" hold
	check $m $m
	RS_REPORT=1 rs_run ${m}_r "$pol;reserve.mode=$m" "$TXN" hold
	check ${m}_r $m
	want ${m}_r "the report's taken and reserved_now" \
		"$(rs_report ${m}_r taken) == 1 && $(rs_report ${m}_r reserved_now) == 0"
done
drawn=$(rs_report watermark_r drawn)
want watermark_r "the transaction drew $drawn bytes, not all of the reserve" \
	"drawn <= watermark_r_R && drawn > watermark_r_R - 4096"
want tokens_r "every request of the reservation draws: $(rs_report tokens_r draws) draws" \
	"$(rs_report tokens_r draws) >= xb + tokens_r_in_ok"
for s in "" _r; do
	want watermark$s "watermark mode holds back X more than tokens mode" \
		"watermark${s}_hold - tokens${s}_hold >= xb - 2 && watermark${s}_hold - tokens${s}_hold <= xb + 2"
done

w=watermark t=tokens
note "R = $watermark_R, X = $watermark_X drawn before the others filled the budget; fill without a reservation: $watermark_base blocks of 4096"
note "held back from the other threads: watermark $((watermark_hold * 4096)) bytes (R + X), tokens $((tokens_hold * 4096)) bytes (R); with stats: $((watermark_r_hold * 4096)), $((tokens_r_hold * 4096))"
note "transaction under the held budget: watermark $watermark_in_ok x 4K (slowest $watermark_in_max_ms ms, none waited), tokens $tokens_in_ok x 4K (slowest $tokens_in_max_ms ms)"
note "request past the reservation: failed after $watermark_in_fail_ms ms (watermark), $tokens_in_fail_ms ms (tokens)"
note "other threads meanwhile: $watermark_hammer_tries and $tokens_hammer_tries NOWAIT requests, $watermark_hammer_got and $tokens_hammer_got served"
note "after the unreserve: fill $watermark_after and $tokens_after blocks (before: $watermark_base and $tokens_base)"
