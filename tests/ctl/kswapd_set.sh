#!/bin/bash
# kswapd turned on and off at run time (gfp-ctl set kswapd=...): the budget
# hears kswapd only while it is on. A server under limit=8M (and two idle
# workers) holds 120 blocks of 64 KiB, past kswapd's wake-up mark (with
# kswapd.scale=1000 the band is 10 % of the limit: it wakes above some
# 7.4 MiB of live bytes) and under the limit's watermark. kswapd off: the
# thread is never woken. After `set kswapd=1` the same hold wakes it
# (vmstat.kswapd_wake grows; it frees nothing here: nothing is reclaimable,
# and the program keeps its blocks). After `set kswapd=0` holding again wakes
# it no more.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

# wakes: vmstat.kswapd_wake of `gfp-ctl CTL_PID report`.
wakes() {
	gctl_expect 0 "$CTL_PID" report
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["vmstat"]["kswapd_wake"])' \
		"$TMP/gctl.out" || fail "no vmstat.kswapd_wake in the report"
}

hold_and_release() {
	ctl_cmd 'hold 120 65536'
	w=$(wakes)
	ctl_cmd release
}

ctl_start ks 'limit=8M;ctl=1;kswapd.scale=1000' server -w 2
ctl_read ready
expect_get kswapd 0

hold_and_release
expect_eq "kswapd=0: wakes after a hold past the mark" 0 "$w"

gctl_expect 0 "$CTL_PID" set kswapd=1
expect_get kswapd 1
hold_and_release
[ "$w" -ge 1 ] || { ctl_show; fail "kswapd=1 (set at run time): never woken by a hold past the mark"; }
note "kswapd=1 set at run time: woken $w times by the hold"

gctl_expect 0 "$CTL_PID" set kswapd=0
expect_get kswapd 0
before=$(wakes)
hold_and_release
expect_eq "kswapd=0 again: wakes after another hold" "$before" "$w"
ctl_end
