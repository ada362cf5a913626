#!/bin/bash
# Without GFP_REPORT, statistics end in one line "pid N: C calls, F
# failures" in GFP_LOG - but not on the program's own stderr when nothing
# failed: a program whose stderr is read (a test runner reads its workers')
# finds there what it finds without the shim. A failure (injected here) is
# worth the line; a log of the user's own always gets it; GFP_REPORT gets
# the report instead.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/fd_prog
for v in $(compgen -e); do
	case $v in GFP_*) unset "$v" ;; esac
done
line='^gfpshim: info: pid [0-9]+: [0-9]+ calls, '
for pol in stats=totals stats=sites stats=paths 'stats=sites;limit=8G;fail.probability=0'; do
	bounded 60 env GFP_POLICY="$pol" LD_PRELOAD="$SHIM" "$PROG" sp >"$TMP/out" 2>"$TMP/err" ||
		fail "$pol: status $?"
	expect_eq "$pol: stdout" ok "$(cat "$TMP/out")"
	[ ! -s "$TMP/err" ] || fail "$pol, nothing failed: stderr: $(cat "$TMP/err")"
	bounded 60 env GFP_POLICY="$pol" GFP_LOG="$TMP/$pol.log" LD_PRELOAD="$SHIM" "$PROG" sp >/dev/null ||
		fail "$pol, GFP_LOG: status $?"
	expect_contains "$pol, GFP_LOG=file" "$TMP/$pol.log" "${line}0 failures$"
done
bounded 60 env GFP_POLICY='stats=totals;fail.probability=1;fail.min=1M' LD_PRELOAD="$SHIM" \
	"$PROG" mtp >"$TMP/out" 2>"$TMP/err" || fail "an injection: status $?"
expect_eq "21 injections: one line" 1 "$(wc -l <"$TMP/err")"
expect_contains "21 injections: the line" "$TMP/err" "${line}21 failures$"
bounded 60 env GFP_POLICY='stats=sites;fail.probability=1;fail.min=1M' GFP_REPORT="$TMP/r.json" \
	LD_PRELOAD="$SHIM" "$PROG" mp >"$TMP/out" 2>"$TMP/err" || fail "with a report: status $?"
[ ! -s "$TMP/err" ] || fail "with GFP_REPORT: stderr: $(cat "$TMP/err")"
expect_contains "with GFP_REPORT: the report" "$TMP/r.json" '"failures":1\}'
