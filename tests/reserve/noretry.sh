#!/bin/bash
# Under a full budget, a NORETRY reservation fails at once (one round of
# reclaim, no wait: under wait=600s a wait would not end before the run's
# deadline), also a costly one; NOWAIT and ATOMIC
# ones (256K: more than ATOMIC's share of min_free) fail at once too. All with
# -1 and errno ENOMEM, and holding nothing: after 512K are freed, a 256K
# NORETRY reservation succeeds at once and the other thread gets back exactly
# the other 256K, then the 256K after the unreserve.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

# check TAG: the assertions on one run's output.
check() {
	local n=$1 k
	rs_load $n
	for k in noretry costly_noretry nowait atomic; do
		declare -n rc=${n}_${k}_rc err=${n}_${k}_errno
		want $n "$k reservation under a full budget: rc $rc errno $err" "rc == -1 && err == 12"
	done
	declare -n fits=${n}_fits_rc refill=${n}_refill un=${n}_after_unreserve
	want $n "a NORETRY reservation that fits: rc $fits" "fits == 0"
	want $n "the other thread got back $refill blocks of the 128 freed, expected 64" \
		"refill >= 63 && refill <= 65"
	want $n "after the unreserve: $un blocks, expected 64" "un >= 63 && un <= 65"
}

pol='limit=16M;wait=600s;retries=2;oom=fail'
rs_run n "$pol" "$TXN" noretry
check n
RS_REPORT=1 rs_run nr "$pol" "$TXN" noretry
check nr
want nr "report: failed 4, taken 1, reserved_now 0" \
	"$(rs_report nr failed) == 4 && $(rs_report nr taken) == 1 && $(rs_report nr reserved_now) == 0"
for k in noretry costly_noretry nowait atomic; do
	declare -n ms=n_${k}_ms
	note "$k reservation failed in $ms ms"
done
