#!/bin/bash
# cxx_new under the shim: aligned and over-aligned new, the sized and
# aligned deletes, the new_handler loop and the nothrow forms behave as the
# standard says (the program checks), both with the idle shim and with
# counting on; and the report shows those calls reached the shim's own
# operators.
# usage: cxx_new.sh PATH-OF-cxx_new
source "$TESTS/lib.sh"
source "$TESTS/cxx/report.sh"
prog=${1:?usage: cxx_new.sh PATH-OF-cxx_new}

# Without the shim the program refuses to run: its checks mean nothing.
rc=0
"$prog" >"$TMP/noshim.out" 2>"$TMP/noshim.err" || rc=$?
expect_eq "status without the shim" 1 "$rc"
expect_contains "message without the shim" "$TMP/noshim.err" 'not loaded'

# Idle shim: no GFP_* variable.
rc=0
LD_PRELOAD="$SHIM" "$prog" >"$TMP/idle.out" 2>"$TMP/idle.err" || rc=$?
cat "$TMP/idle.err" >&2
expect_eq "status under the idle shim" 0 "$rc"
expect_contains "idle run" "$TMP/idle.out" '^all checks passed$'

# Counting on: the same checks, and the report.
rc=0
GFP_REPORT="$TMP/report.json" LD_PRELOAD="$SHIM" "$prog" >"$TMP/report.out" 2>"$TMP/report.err" &
pid=$!
wait "$pid" || rc=$?
cat "$TMP/report.err" >&2
expect_eq "status with GFP_REPORT" 0 "$rc"
expect_contains "run with GFP_REPORT" "$TMP/report.out" '^all checks passed$'
check_report "$TMP/report.json" "$pid" "$TMP/report.out"
