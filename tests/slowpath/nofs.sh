#!/bin/bash
# NOFS and NOIO never reach the OOM step: with oom=fail, retries=4, wait=5ms
# a small request still loops at its first canary (100 rounds, far past the
# retries), when the other thread frees, and succeeds after the free, with
# no OOM report. nofs_fail=1 (Linux 3.19) makes them
# fail after the retries instead, still without an OOM report; KERNEL then
# still reaches the OOM step, and NOFAIL still loops.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
POL='limit=8M;default=KERNEL;oom=fail;retries=4;wait=5ms'

for base in NOFS NOIO; do
	sp_run "loop-$base" "$POL" --flags $base --size 4096 --source budget --free-on-canary 1
	sp_expect_result "loop-$base" 0 ok 1
	el=$(sp_field "loop-$base" elapsed_ms)
	sp_no_match "$base: OOM step" "$TMP/loop-$base.log" "invoked oom-killer"
	note "$base looped for $el ms, no OOM step"

	sp_run "fail-$base" "$POL;nofs_fail=1" --flags $base --size 4096 --source budget --free-on-canary 1
	sp_expect_result "fail-$base" 0 null 0
	expect_eq "$base nofs_fail=1 errno" 12 "$(sp_field "fail-$base" errno)"
	sp_no_match "$base nofs_fail=1: OOM step" "$TMP/fail-$base.log" "invoked oom-killer|OOM step|oom=fail"
	expect_contains "$base nofs_fail=1: failure report" "$TMP/fail-$base.log" \
		"^gfpshim: warning: sp_case\\($SP_PID\\): allocation failure: size:4096 order:0, mode:$base 0x"
	note "$base with nofs_fail=1 failed after $(sp_field "fail-$base" elapsed_ms) ms"
done

sp_run kernel "$POL;nofs_fail=1" --flags KERNEL --size 4096 --source budget --free-on-canary 1
sp_expect_result kernel 0 null 0
# oom=fail invokes no killer: the failure report says the OOM step gave up.
expect_contains "KERNEL with nofs_fail=1 reaches the OOM step" "$TMP/kernel.log" \
	"^gfpshim: warning: sp_case\\($SP_PID\\): allocation failure: size:4096 order:0, mode:KERNEL 0xcc0: the OOM step gave up \\(oom=fail\\)"

sp_run nofail "$POL;nofs_fail=1" --flags 'NOFS|NOFAIL' --size 4096 --source budget --free-on-canary 1
sp_expect_result nofail 0 ok 1
sp_no_match "NOFS|NOFAIL: OOM step" "$TMP/nofail.log" "invoked oom-killer|OOM step|oom=fail"
