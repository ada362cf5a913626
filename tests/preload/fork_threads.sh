#!/bin/bash
# fork() in a threaded program, idle and with a policy that registers threads.
source "$TESTS/lib.sh"
LD_PRELOAD=$SHIM timeout 120 "$BUILD/tests/preload/fork_threads" || fail "idle: exit $?"
GFP_POLICY=stats=totals LD_PRELOAD=$SHIM timeout 120 "$BUILD/tests/preload/fork_threads" 2>"$TMP/err" || fail "stats: exit $?"
expect_eq "one report line per process (201)" 201 "$(grep -c 'gfpshim: info: pid' "$TMP/err")"
GFP_POLICY=stats=sites LD_PRELOAD=$SHIM timeout 120 "$BUILD/tests/preload/fork_threads" 2>"$TMP/err" || fail "stats=sites: exit $?"
expect_eq "stats=sites: one report line per process (201)" 201 "$(grep -c 'gfpshim: info: pid' "$TMP/err")"
