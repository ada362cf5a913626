#!/bin/bash
# fork() in a threaded program, idle and with a policy that registers threads.
# Every process reports at exit (201 of them); without GFP_REPORT nothing
# failed, so nothing is said on the program's stderr.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/fork_threads
bounded 120 env LD_PRELOAD="$SHIM" "$PROG" || fail "idle: exit $?"
bounded 120 env GFP_POLICY=stats=totals LD_PRELOAD="$SHIM" "$PROG" 2>"$TMP/err" || fail "stats: exit $?"
[ ! -s "$TMP/err" ] || fail "stats=totals, no report asked, nothing failed: stderr: $(head -c 300 "$TMP/err")"
bounded 120 env GFP_POLICY=stats=totals GFP_LOG="$TMP/log" LD_PRELOAD="$SHIM" "$PROG" ||
	fail "stats, GFP_LOG: exit $?"
expect_eq "one summary line per process in GFP_LOG (201)" 201 "$(grep -c 'gfpshim: info: pid' "$TMP/log")"
mkdir "$TMP/r"
bounded 120 env GFP_POLICY=stats=sites GFP_REPORT="$TMP/r/%p.json" LD_PRELOAD="$SHIM" "$PROG" 2>"$TMP/err" ||
	fail "stats=sites: exit $?"
expect_eq "stats=sites: one report per process (201)" 201 "$(find "$TMP/r" -name '*.json' | wc -l)"
[ ! -s "$TMP/err" ] || fail "stats=sites with GFP_REPORT: stderr: $(head -c 300 "$TMP/err")"
