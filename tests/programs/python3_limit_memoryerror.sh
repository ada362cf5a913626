#!/bin/bash
# python3 asking for one 200 MB bytearray under limit=64M: a costly request
# fails after one round, so malloc returns NULL and python3 raises its own
# MemoryError (status 1) - no OOM step, no kill; the failure report names
# the size. A 20 MB bytearray in the same budget still works.
source "$TESTS/lib.sh"
need_prog /usr/bin/python3
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE

rc=0
GFP_POLICY='limit=64M' GFP_LOG=$TMP/log LD_PRELOAD=$SHIM /usr/bin/python3 -c '
small = bytearray(20 * 2**20)
print("20 MB ok")
bytearray(200 * 2**20)
print("200 MB ok")
' >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] || { cat "$TMP/err" "$TMP/log" >&2; fail "status $rc, expected 1 (MemoryError)"; }
expect_eq "stdout" "20 MB ok" "$(cat "$TMP/out")"
expect_contains "python3's MemoryError" "$TMP/err" '^MemoryError$'
expect_contains "failure report" "$TMP/log" \
	'^gfpshim: warning: python3[^ ]*\([0-9]+\): allocation failure: size:2097152[0-9][0-9] order:16, mode:KERNEL 0xcc0'
! grep -q 'invoked oom-killer' "$TMP/log" || fail "the OOM step ran for a costly request"
