#!/bin/bash
# A failing request without NOWARN logs one kernel-style report:
# "COMM(PID): allocation failure: size:N order:N, mode:NAMES 0xHEX", a reason
# and frames naming the caller; warn.burst limits reports per 10 s (default
# 1), NOWARN suppresses them.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
report_re() { # PID SIZE ORDER MODE HEX
	echo "^gfpshim: warning: sp_case\\($1\\): allocation failure: size:$2 order:$3, mode:$4 $5([^0-9a-fx]|\$)"
}

sp_run nowait 'limit=8M' --flags NOWAIT --size 4096 --source budget --repeat 3
for i in 0 1 2; do sp_expect_result nowait $i null 0; done
re=$(report_re "$SP_PID" 4096 0 NOWAIT 0x800)
expect_eq "reports for 3 failures, warn.burst=1" 1 "$(grep -cE "$re" "$TMP/nowait.log")"
lines_after "$TMP/nowait.log" "$re" >"$TMP/frames"
expect_contains "report frames name the caller" "$TMP/frames" \
	"${FRAME}sp_request_under_pressure\\+0x[0-9a-f]+ \\([^ ]*sp_case\\+0x[0-9a-f]+\\)"

sp_run burst 'limit=8M;warn.burst=2' --flags NOWAIT --size 4096 --source budget --repeat 3
expect_eq "reports for 3 failures, warn.burst=2" 2 \
	"$(grep -cE "$(report_re "$SP_PID" 4096 0 NOWAIT 0x800)" "$TMP/burst.log")"

sp_run nowarn 'limit=8M;warn.burst=10' --flags 'ATOMIC|NOWARN' --size 4096 --source budget --repeat 3
sp_expect_result nowarn 2 null 0
sp_no_match "NOWARN report" "$TMP/nowarn.log" "allocation failure"

sp_run costly 'limit=8M' --flags KERNEL --size 65536 --source budget
sp_expect_result costly 0 null 0
expect_contains "costly report" "$TMP/costly.log" "$(report_re "$SP_PID" 65536 4 KERNEL 0xcc0)"

sp_run high 'limit=8M' --flags 'NOIO|NORETRY' --size 20000 --source budget
sp_expect_result high 0 null 0
expect_contains "order 3 report" "$TMP/high.log" "$(report_re "$SP_PID" 20000 3 'NOIO\|NORETRY' 0x10c00)"
