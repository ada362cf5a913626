#!/bin/bash
# python3 growing a list of 1000-byte strings forever under limit=64M: each
# string is a small (KERNEL, order 0) malloc, so when the budget is full the
# request loops, reaches the OOM step and the process dies by SIGKILL (137)
# with the kernel-style OOM report in the log; it does not get a MemoryError.
source "$TESTS/lib.sh"
need_prog /usr/bin/python3
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE

GFP_POLICY='limit=64M' GFP_LOG=$TMP/log LD_PRELOAD=$SHIM /usr/bin/python3 -c '
l = [None] * (1 << 20)
i = 0
while True:
    l[i] = str(i).ljust(1000)
    i += 1
' >"$TMP/out" 2>"$TMP/err" &
pid=$!
rc=0
wait $pid 2>/dev/null || rc=$?
[ "$rc" = 137 ] || { cat "$TMP/err" "$TMP/log" >&2; fail "status $rc, expected 137 (SIGKILL by the OOM step)"; }
expect_contains "OOM report" "$TMP/log" \
	"^gfpshim: error: python3[^ ]*\\($pid\\) invoked oom-killer: size=[0-9]+ order=0 mode:KERNEL 0xcc0 oom_score_adj=-?[0-9]+\$"
expect_contains "kill line" "$TMP/log" "^gfpshim: error: Out of memory: Killed process $pid \\(python3[^ ]*\\)"
! grep -q MemoryError "$TMP/err" || fail "python3 raised MemoryError instead of being killed"
note "$(grep -m1 'invoked oom-killer' "$TMP/log")"
