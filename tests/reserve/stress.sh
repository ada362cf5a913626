#!/bin/bash
# 16 threads reserve (512K-1.5M, a quarter NORETRY, a third nesting 64K
# more), allocate inside the reservation, free and unreserve for 10 s under
# limit=16M, so that reservations wait for each other (oom=wait: a KERNEL
# reservation never fails); every 20-60 rounds a thread exits holding its
# reservation and a new one takes its place (with GFP_REPORT). Then tokens
# mode for 3 s on the plain fast path (no report).
# Each slot goes on past the time until it has done its share (txn.c:
# slot_done), so the counts checked below do not depend on the machine's
# speed. Checks: the run ends (no deadlock: within a generous 100 s of its
# time), only NORETRY reservations fail and with ENOMEM, no request inside a
# reservation fails, the report agrees with the program's counts and has
# reserved_now 0, and the main thread fills as much as before (no reserved
# byte lost).
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

run() { # run TAG MODE SECONDS REPORT
	RS_REPORT=$4 RS_TIMEOUT=$(($3 + 100)) rs_run $1 "limit=16M;reserve.mode=$2;oom=wait;wait=20ms" "$TXN" stress $3 16
	[ "$RS_RC" = 124 ] && { rs_show $1; fail "$1: still running $((RS_TIMEOUT)) s after a $3 s run: deadlock?"; }
	rs_load $1
	declare -n v=${1}_stop_ms taken=${1}_taken failed=${1}_failed base=${1}_base after=${1}_after
	declare -n nested=${1}_nested allocs=${1}_allocs threads=${1}_threads
	declare -n exits=${1}_exits_holding wait_ms=${1}_max_wait_ms
	want $1 "only NORETRY reservations may fail, with ENOMEM" "${1}_wrong_errno == 0"
	want $1 "requests inside a reservation failed: ${1}_in_fail" "${1}_in_fail == 0"
	want $1 "fewer rounds than each slot's share" \
		"taken >= 1600 && nested >= 16 && exits >= 64 && threads >= 64"
	if [ $4 = 1 ]; then
		want $1 "the report's taken/failed ($(rs_report $1 taken)/$(rs_report $1 failed)) vs the program's ($taken/$failed)" \
			"$(rs_report $1 taken) == taken && $(rs_report $1 failed) == failed"
		want $1 "reserved bytes left over at exit: $(rs_report $1 reserved_now)" \
			"$(rs_report $1 reserved_now) == 0"
		want $1 "peak reserved $(rs_report $1 peak) above the budget" "$(rs_report $1 peak) <= 16 << 20"
	fi
	want $1 "fill after the run $after, before $base: reserved bytes lost" \
		"after - base <= 1 && base - after <= 1"
	note "$2, $3 s x 16 threads: $taken reservations ($nested nested), $failed NORETRY failures, $allocs requests inside, $threads threads ($exits exited holding), longest wait $wait_ms ms, stop in $v ms; fill $base -> $after"
}
run w watermark 10 1
run t tokens 3 0
