#!/bin/bash
# A NOFS|NOFAIL request looping under a full budget prints the canary after
# canary.retries rounds and every that many again, at most canary.burst
# times: "COMM(PID) possible memory allocation deadlock size N in FUNC after
# R rounds, S.Ss (mode:NOFS|NOFAIL 0x8c40)" and frames naming the caller;
# canary.ms triggers it by time alone.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
CALLER=sp_request_under_pressure
canary_re() { # canary_re PID MODE HEX
	echo "^gfpshim: warning: sp_case\\($1\\) possible memory allocation deadlock size 4096 in ([A-Za-z_][A-Za-z0-9_.]*) after ([0-9]+) rounds, ([0-9]+\\.[0-9])s \\(mode:$2 $3\\)\$"
}

# Rounds: canary.retries=5, wait=1ms, the free after the 10th canary (the
# 50 rounds that canary.burst=10 lets print).
sp_run rounds 'limit=8M;canary.retries=5;wait=1ms' --flags 'NOFS|NOFAIL' --size 4096 \
	--source budget --free-on-canary 10
sp_expect_result rounds 0 ok 1
re=$(canary_re "$SP_PID" 'NOFS\|NOFAIL' 0x8c40)
expect_contains "canary line" "$TMP/rounds.log" "$re"
grep -E "$re" "$TMP/rounds.log" >"$TMP/canaries"
n=$(wc -l <"$TMP/canaries")
rounds=$(sed -E "s/$re/\\2/" "$TMP/canaries" | tr '\n' ' ')
funcs=$(sed -E "s/$re/\\1/" "$TMP/canaries" | sort -u | tr '\n' ' ')
note "canaries after rounds: $rounds(in: $funcs)"
expect_eq "first canary after canary.retries rounds" 5 "${rounds%% *}"
prev=0
for r in $rounds; do
	[ $((r % 5)) = 0 ] && [ "$r" -gt "$prev" ] || fail "canary rounds not every 5: $rounds"
	prev=$r
done
expect_eq "canaries with canary.burst=10 (default)" 10 "$n"
expect_eq "FUNC of the canary line" "$CALLER " "$funcs"
# The frames follow the first canary line and name the calling function.
lines_after "$TMP/rounds.log" "$re" >"$TMP/frames"
expect_contains "frame of the caller after the canary" "$TMP/frames" "$FRAME$CALLER\\+0x[0-9a-f]+ \\([^ ]*sp_case\\+0x[0-9a-f]+\\)"

# canary.burst=2: two canaries only.
sp_run burst 'limit=8M;canary.retries=5;canary.burst=2;wait=1ms' --flags 'NOFS|NOFAIL' \
	--size 4096 --source budget --free-ms 1000
sp_expect_result burst 0 ok 1
expect_eq "canaries with canary.burst=2" 2 "$(grep -cE "$(canary_re "$SP_PID" 'NOFS\|NOFAIL' 0x8c40)" "$TMP/burst.log")"

# Time alone: canary.ms=200ms with a round count that is never reached.
sp_run time 'limit=8M;canary.retries=1000000;canary.ms=200ms;wait=5ms' --flags NOIO \
	--size 4096 --source budget --free-on-canary 1
sp_expect_result time 0 ok 1
re=$(canary_re "$SP_PID" NOIO 0xc00)
expect_contains "canary by time" "$TMP/time.log" "$re"
secs=$(grep -E "$re" "$TMP/time.log" | head -1 | sed -E "s/$re/\\3/")
note "time-triggered canary after ${secs}s"
# Not before canary.ms (when after is the machine's business: before the free).
/usr/bin/python3 -c "import sys; sys.exit(0 if 0.2 <= float(sys.argv[1]) else 1)" "$secs" ||
	fail "canary.ms=200ms: first canary after ${secs}s"

# A NORETRY request makes one round: below canary.retries=2, no canary.
sp_run none 'limit=8M;canary.retries=2;wait=1ms' --flags 'KERNEL|NORETRY' --size 4096 --source budget
sp_expect_result none 0 null 0
sp_no_match "canary for a one-round request" "$TMP/none.log" "possible memory allocation deadlock"
