#!/bin/bash
# What gfp-ctl refuses, and that a refused set changes nothing: an unknown
# key, a bad value or a contradiction exits 125 with the parser's messages
# (did-you-mean), every one of them; a key that cannot change at run time
# (limit= turned on or off, stats, reserve.*, ctl, GFP_RULES) exits 1 "not
# applied at run time"; what get prints, set takes back; a set of several keys
# with one bad key applies none of them (get shows the old values, and the
# program's calls still succeed). A process without ctl=1 or no process
# exits 2, and so does every usage error. A limit set at start-up may change
# but not be turned off.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

# unchanged: the keys a refused set named still have their start-up values
# and no call fails.
unchanged() {
	expect_get fail.probability 0
	expect_get fail.times -1
	expect_get limit 0
	expect_get stats off
	expect_get wait 20ms
	ctl_cmd 'run 200'
	ctl_expect_field "$1: NULLs of 3x200 calls" nulls 0
}

ctl_start ref 'ctl=1' server -w 2
ctl_read ready

# Parse errors: 125, the parser's message.
gctl_expect 125 "$CTL_PID" set fail.probabilty=1
expect_contains "unknown key" "$TMP/gctl.err" \
	"refused: gfpshim: gfp-ctl set: unknown key 'fail.probabilty' \(did you mean 'fail.probability'\?\)"
gctl_expect 125 "$CTL_PID" set fail.probability=2
expect_contains "probability 2" "$TMP/gctl.err" "refused: gfpshim: .*fail\.probability"
gctl_expect 125 "$CTL_PID" set fail.times=many
expect_contains "fail.times=many" "$TMP/gctl.err" "refused: gfpshim: .*fail\.times"
unchanged "after parse errors"

# Several keys, one of them bad: none applied.
gctl_expect 125 "$CTL_PID" set fail.probability=1 fail.times=3 wait=5ms stat=totals
expect_contains "one unknown key among good ones" "$TMP/gctl.err" "did you mean 'stats'"
unchanged "after fail.probability=1 fail.times=3 wait=5ms stat=totals"
gctl_expect 125 "$CTL_PID" 'set' 'fail.probability=1;wait=5ms;oom=sometimes'
expect_contains "one bad value among good ones" "$TMP/gctl.err" "refused: gfpshim: .*oom"
unchanged "after fail.probability=1;wait=5ms;oom=sometimes"
# Every bad key is named, not only the last.
gctl_expect 125 "$CTL_PID" set 'fail.nth=2;bogus=1;oom=x'
expect_contains "two errors: bogus" "$TMP/gctl.err" "refused: gfpshim: gfp-ctl set: unknown key 'bogus'"
expect_contains "two errors: oom" "$TMP/gctl.err" "refused: gfpshim: .*oom"
# Contradictions are bad values, as at start-up.
gctl_expect 125 "$CTL_PID" set min_free=1M
expect_contains "min_free without a limit" "$TMP/gctl.err" "refused: gfpshim: gfp-ctl set: min_free needs a limit"
gctl_expect 125 "$CTL_PID" set fail.probability=1 fail.min=1K fail.max=10
expect_contains "fail.min above fail.max" "$TMP/gctl.err" "fail\.min is above fail\.max"
# A value in the parser's words is no refusal: 125 still.
gctl_expect 125 "$CTL_PID" set 'oom=at run time'
gctl_expect 125 "$CTL_PID" set refused=1
unchanged "after contradictions"

# What get prints, set takes back (GFP_RULES is start-up only: refused).
gctl_expect 0 "$CTL_PID" set fail.probability=0.0000000004
expect_get fail.probability 0.0000000004
gctl_expect 0 "$CTL_PID" get
grep -v '^rules=' "$TMP/gctl.out" >"$TMP/policy.before"
mapfile -t kvs <"$TMP/policy.before"
gctl_expect 0 "$CTL_PID" set "${kvs[@]}"
gctl_expect 0 "$CTL_PID" get
grep -v '^rules=' "$TMP/gctl.out" | cmp -s - "$TMP/policy.before" ||
	fail "get, set and get again differ: $(grep -v '^rules=' "$TMP/gctl.out" | diff "$TMP/policy.before" -)"
gctl_expect 1 "$CTL_PID" set 'rules=sym:* => NOFS'
expect_contains "rules" "$TMP/gctl.err" "refused: gfpshim: not applied at run time: rules cannot change"
gctl_expect 0 "$CTL_PID" set fail.probability=0

# Keys that cannot change at run time: 1, the reason.
for kv in limit=64M stats=totals reserve.mode=tokens reserve.thread=64K ctl=0; do
	gctl_expect 1 "$CTL_PID" set fail.probability=1 wait=5ms "$kv"
	expect_contains "$kv" "$TMP/gctl.err" "refused: gfpshim: not applied at run time: ${kv%%[.=]*}"
	[ ! -s "$TMP/gctl.out" ] || fail "$kv: something on stdout: $(cat "$TMP/gctl.out")"
done
note "refused: $(cat "$TMP/gctl.err")"
unchanged "after sets with a key that cannot change at run time"

# get of an unknown key: an error (1), with did-you-mean; no output.
gctl_expect 1 "$CTL_PID" get fail.sed
expect_contains "get fail.sed" "$TMP/gctl.err" "unknown key 'fail.sed' \(did you mean 'fail.seed'\?\)"

# Usage errors: 2, the error and a hint, before any connection.
gctl_expect 2 "$CTL_PID" set ''
expect_contains "set ''" "$TMP/gctl.err" "^gfp-ctl: error: set needs KEY=VALUE"
for args in "" "$CTL_PID" "x$CTL_PID get" "0 get" "-5 get" "$CTL_PID frob" "$CTL_PID set" \
	"$CTL_PID get limit wait" "$CTL_PID report now" "$CTL_PID GET"; do
	# shellcheck disable=SC2086
	gctl_expect 2 $args
	expect_contains "gfp-ctl $args" "$TMP/gctl.err" "^gfp-ctl: error: "
	expect_contains "gfp-ctl $args: hint" "$TMP/gctl.err" "^try 'gfp-ctl --help'\$"
done
gctl_expect 0 --help
expect_contains "--help" "$TMP/gctl.out" "^usage: gfp-ctl PID get"
# A newline would start a second request.
gctl_expect 2 "$CTL_PID" set "$(printf 'wait=5ms\nset fail.probability=1')"
unchanged "after a set with a newline"
ctl_end

# A process started with a limit: it may change, but not turn off.
ctl_start lim 'ctl=1;limit=64M' server -w 1
ctl_read ready
gctl_expect 1 "$CTL_PID" set limit=0 fail.probability=1
expect_contains "limit=0" "$TMP/gctl.err" "refused: gfpshim: not applied at run time: limit= .*turned on or off"
gctl_expect 125 "$CTL_PID" set limit=1K
expect_contains "limit=1K" "$TMP/gctl.err" "refused: gfpshim: gfp-ctl set: limit below 64K"
expect_get limit 67108864
expect_get fail.probability 0
gctl_expect 0 "$CTL_PID" set limit=32M
expect_get limit 33554432
ctl_cmd 'run 100'
ctl_expect_field "limit=32M: NULLs" nulls 0
ctl_end

# No ctl=1: nothing listens, 2. Likewise for a process that has exited.
ctl_start noctl 'fail.probability=0' server -w 0
ctl_read ready
gctl_expect 2 "$CTL_PID" get
expect_contains "no ctl=1" "$TMP/gctl.err" "no control socket for process $CTL_PID"
gctl_expect 2 "$CTL_PID" set fail.probability=1
ctl_cmd 'run 100'
ctl_expect_field "no ctl=1: NULLs after a set nobody heard" nulls 0
ctl_end
gctl_expect 2 "$CTL_PID" get
