#!/bin/bash
# The listener does not disturb seeded injection: under
# fail.probability=0.3;fail.seed=42 the calls that fail (main's 300, then
# two threads' 300 each) are the same with ctl=1 as without it, also when
# gfp-ctl talks to the process (get, report) before the calls, and run to
# run.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

P='fail.probability=0.3;fail.seed=42'
# plain TAG POLICY: one run of ctl_prog seq without talking to it.
plain() {
	env LD_PRELOAD="$SHIM" GFP_POLICY="$2" "$CTL_PROG" seq -t 2 300 >"$TMP/$1.out" 2>"$TMP/$1.err" ||
		fail "$1: exit status $? $(head -c 500 "$TMP/$1.err")"
	[ "$(grep -c '^\(main\|t[01]\) [.X]\{300\}$' "$TMP/$1.out")" = 3 ] ||
		fail "$1: not 3 patterns: $(head -c 500 "$TMP/$1.out")"
}
count_x() { tr -cd X <"$TMP/$1.out" | wc -c; }
same() {
	cmp -s "$TMP/$1.out" "$TMP/$2.out" || {
		diff "$TMP/$1.out" "$TMP/$2.out" >&2
		fail "$3"
	}
}

plain base1 "$P"
plain base2 "$P"
same base1 base2 "without ctl=1: runs 1 and 2 differ"
x=$(count_x base1)
[ "$x" -ge 180 ] && [ "$x" -le 360 ] || fail "without ctl=1: $x of 900 calls failed at probability 0.3"
plain ctl1 "$P;ctl=1"
plain ctl2 "$P;ctl=1"
same ctl1 ctl2 "with ctl=1: runs 1 and 2 differ"

# With gfp-ctl talking to the listener before the calls.
ctl_start talk "$P;ctl=1" seq -t 2 -w 300
expect_get fail.seed 42
gctl_expect 0 "$CTL_PID" report
echo go >&"$CTL_IN"
: >"$TMP/talk.pat"
for l in main t0 t1; do
	ctl_read "$l "
	echo "$CTL_LINE" >>"$TMP/talk.pat"
done
ctl_wait 0
mv "$TMP/talk.pat" "$TMP/talk.out"
same ctl1 talk "with ctl=1: a run that gfp-ctl talked to differs from one it did not"

note "without ctl=1: $x of 900 calls failed; with ctl=1: $(count_x ctl1)"
same base1 ctl1 "fail.probability=0.3;fail.seed=42: the failure pattern with ctl=1 differs from the one without it"
