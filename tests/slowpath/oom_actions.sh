#!/bin/bash
# The OOM step of a small KERNEL request under a full budget (retries=4,
# wait=5ms): oom=kill logs the kernel-style report and dies by SIGKILL;
# oom=abort dies by SIGABRT after the report; oom=wait keeps looping with no
# OOM step; oom=notify calls the notifiers and their frees are progress. A
# process with oom_score_adj -1000 is never the victim: it keeps looping.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
POL='limit=8M;default=KERNEL;retries=4;wait=5ms'

# kill: report, "Out of memory: Killed process", SIGKILL (137).
run_adj 500 kill "$POL;oom=kill" --flags KERNEL --size 4096 --source budget --free-on-canary 1
[ "$SP_RC" = 137 ] || { sp_show kill; fail "oom=kill: status $SP_RC, expected 137 (SIGKILL)"; }
expect_contains "oom=kill report" "$TMP/kill.log" \
	"^gfpshim: error: sp_case\\($SP_PID\\) invoked oom-killer: size=4096 order=0 mode:KERNEL 0xcc0 oom_score_adj=500\$"
expect_contains "oom=kill: Mem-Info with live bytes and the limit" "$TMP/kill.log" \
	'^gfpshim: error: Mem-Info: live:[0-9.]+ [KM]iB limit:8\.0 MiB free:'
expect_contains "oom=kill: frames name the caller" "$TMP/kill.log" \
	"${FRAME}sp_request_under_pressure\\+0x"
expect_contains "oom=kill: kill line" "$TMP/kill.log" \
	"^gfpshim: .*Out of memory: Killed process $SP_PID \\(sp_case\\)"
[ ! -s "$TMP/kill.out" ] || fail "oom=kill: the request returned: $(cat "$TMP/kill.out")"

# abort: report, then SIGABRT (134).
sp_run abort "$POL;oom=abort" --flags KERNEL --size 4096 --source budget --free-on-canary 1
[ "$SP_RC" = 134 ] || { sp_show abort; fail "oom=abort: status $SP_RC, expected 134 (SIGABRT)"; }
expect_contains "oom=abort report" "$TMP/abort.log" \
	"^gfpshim: error: sp_case\\($SP_PID\\) invoked oom-killer: size=4096 order=0 mode:KERNEL 0xcc0 "

# fail: each request fails after its OOM step, which invokes no killer: the
# failure report (rate-limited by warn.burst, per 10 s) says the OOM step gave
# up; the "oom" record of each is not rate-limited.
for burst in 1 10; do
	GFP_RECORD=$TMP/fail$burst.rec sp_run fail$burst "$POL;oom=fail;warn.burst=$burst" \
		--flags KERNEL --size 4096 --source budget --repeat 5
	[ "$SP_RC" = 0 ] || { sp_show fail$burst; fail "oom=fail: status $SP_RC"; }
	for i in 0 1 2 3 4; do sp_expect_result fail$burst $i null 0; done
	want=$((burst < 5 ? burst : 5))
	expect_eq "oom=fail warn.burst=$burst: reports printed" "$want" \
		"$(grep -c 'allocation failure: .*: the OOM step gave up (oom=fail)' "$TMP/fail$burst.log")"
	expect_eq "oom=fail warn.burst=$burst: no killer invoked" 0 \
		"$(grep -c 'invoked oom-killer' "$TMP/fail$burst.log")"
	expect_eq "oom=fail warn.burst=$burst: oom records" 5 \
		"$(grep -c '"event":"oom"' "$TMP/fail$burst.rec")"
done
note "oom=fail: 5 failed requests, reports printed 1 (warn.burst=1) and 5 (10), 5 records each"

# wait: no OOM step, the request keeps looping until the free.
sp_run wait "$POL;oom=wait" --flags KERNEL --size 4096 --source budget --free-on-canary 1
sp_expect_result wait 0 ok 1
sp_no_match "oom=wait: OOM report" "$TMP/wait.log" "invoked oom-killer|Killed process"

# notify: the notifier frees 128 blocks; that is progress, the request succeeds.
sp_run notify "$POL;oom=notify" --flags KERNEL --size 4096 --source budget --notifier
sp_expect_result notify 0 ok 0
calls=$(sp_field notify notifier_calls)
[ "${calls:-0}" -ge 1 ] || fail "oom=notify: the notifier was not called"
note "oom=notify: notifier called $calls time(s), request served after $(sp_field notify elapsed_ms) ms"
