#!/bin/bash
# fail.where=attempt fails one attempt and the slow path's retry rules
# apply: a small KERNEL request retries and never reaches the program as
# NULL (no failure record, no failure report); NORETRY, NOWAIT and costly
# requests fail after their round, with a failure record and the kernel-style
# failure report; NOFAIL loops through injected attempts. At entry (the
# default) a request fails at once: NULL, no retry, no failure report, no
# failure record. The retries of one request are one eligible call: its
# injection records carry the same call number. At probability 0.9 with
# canary.retries=5 a small request loops long enough to print the canary
# (and a canary record). At probability 1 the request reaches the OOM step
# in round 17 (16 retries): an oom record, then the outcome oom= asks for.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"
A='fail.where=attempt;wait=1ms'

seq_expect kernel3 "fail.probability=1;fail.times=3;$A" '.....' '5*m100'
expect_records kernel3 injection 3
expect_records kernel3 failure 0
sp_no() { ! grep -Eq -- "$3" "$2" || { head -c 2000 "$2" >&2; fail "$1: unexpected /$3/"; }; }
sp_no "small KERNEL request retried" "$TMP/kernel3.log" 'allocation failure'

seq_expect kernel_p "fail.probability=0.5;fail.seed=3;$A" "$(dots 200)" '200*m100'
n=$(injections kernel_p)
[ "$n" -ge 100 ] || fail "probability 0.5 at attempt on 200 requests: only $n injections"
expect_records kernel_p failure 0
note "200 small KERNEL requests, $n injected attempts, none reached the program"
# Every form of request, each with one injected attempt.
seq_expect forms "fail.probability=1;fail.interval=2;$A" '............' \
	'm100 c100 r100 a100 p100 A100 s10 k100 m100 c100 r100 a100'

# Requests that may not loop fail, with a failure record and report.
for c in 'y100:KERNEL|NORETRY' 'w100:NOWAIT' 't100:ATOMIC' 'm100000:KERNEL'; do
	op=${c%%:*} flags=${c#*:}
	tag=fail_${op}
	seq_expect "$tag" "fail.probability=1;$A" X "$op"
	expect_records "$tag" failure 1
	expect_eq "$op: failure record flags" "$flags" "$($REC get "$TMP/$tag.rec" failure flags)"
	expect_eq "$op: failure record size" "${op#?}" "$($REC get "$TMP/$tag.rec" failure size)"
	[ "$(injections "$tag")" -ge 1 ] || fail "$op: no injection record"
	expect_contains "$op: failure report" "$TMP/$tag.log" \
		"^gfpshim: warning: inj_seq\\($INJ_PID\\): allocation failure: size:${op#?} "
	# The injection comes before the failure.
	expect_eq "$op: last record" failure "$($REC events "$TMP/$tag.rec" | tail -1)"
done

# NOFAIL: injected attempts, then served.
seq_expect nofail "fail.probability=1;fail.times=5;$A" '.' 'n100'
expect_records nofail injection 5
expect_records nofail failure 0

# At entry: NULL at once, one injection record, no failure record or report.
for op in m100 y100 m100000; do
	seq_expect "entry_$op" 'fail.probability=1' X "$op"
	expect_records "entry_$op" injection 1
	expect_records "entry_$op" failure 0
	sp_no "$op at entry" "$TMP/entry_$op.log" 'allocation failure'
done
seq_expect entry_named 'fail.probability=1;fail.times=3;fail.where=entry' 'XXX..' '5*m100'
note "entry fails at once, attempt follows the retry rules"

# The canary, driven by injected attempts alone.
CAN='fail.probability=0.9;fail.where=attempt;canary.retries=5;wait=1ms'
seq_expect canary "$CAN" '.' 'm4096'
expect_contains "canary line" "$TMP/canary.log" \
	"^gfpshim: warning: inj_seq\\($INJ_PID\\) possible memory allocation deadlock size 4096 in [A-Za-z_][A-Za-z0-9_.]* after 5 rounds, [0-9]+\\.[0-9]s \\(mode:KERNEL 0xcc0\\)\$"
expect_contains "canary frames" "$TMP/canary.log" '^ *#0 [A-Za-z_].*\(inj_seq\+0x[0-9a-f]+\)$'
[ "$($REC count "$TMP/canary.rec" canary)" -ge 1 ] || { inj_show canary; fail "no canary record"; }
expect_eq "canary record rounds" 5 "$($REC get "$TMP/canary.rec" canary rounds | head -1)"
expect_records canary failure 0
note "fail.probability=0.9 at attempt drove $(injections canary) failed attempts and the canary"

# The OOM step after 16 retries (round 17) of injected attempts: an oom record, then
# the outcome - SIGKILL (kill), a NULL with a failure record (fail), SIGABRT
# with a crash record (abort). The OOM report must not blame jemalloc or
# ulimit -v for what was an injection.
inj_run oom_kill "fail.probability=1;$A" "$INJ/inj_seq" m100
expect_eq "oom=kill: status" 137 "$INJ_RC"
$REC check "$TMP/oom_kill.rec" >/dev/null || fail "oom=kill: bad records"
expect_eq "oom=kill: last record" oom "$($REC events "$TMP/oom_kill.rec" | tail -1)"
expect_records oom_kill oom 1
expect_eq "oom=kill: rounds in the oom record" 17 "$($REC get "$TMP/oom_kill.rec" oom rounds)"
expect_contains "oom=kill: OOM report" "$TMP/oom_kill.log" "^gfpshim: error: inj_seq\\($INJ_PID\\) invoked oom-killer: size=100 order=0 mode:KERNEL 0xcc0 "
seq_expect oom_fail "fail.probability=1;oom=fail;$A" X m100
expect_eq "oom=fail: records after the injections" 'oom failure' \
	"$($REC events "$TMP/oom_fail.rec" | grep -v injection | paste -sd ' ')"
inj_run oom_abort "fail.probability=1;oom=abort;$A" "$INJ/inj_seq" m100
expect_eq "oom=abort: status" 134 "$INJ_RC"
expect_eq "oom=abort: records after the injections" 'oom crash' \
	"$($REC events "$TMP/oom_abort.rec" | grep -v injection | paste -sd ' ')"
note "the OOM step after injected attempts leaves an oom record"
! grep -Eq 'jemalloc itself returned NULL|ulimit -v' "$TMP/oom_kill.log" ||
	check_later "oom=kill after injected attempts: the report blames jemalloc: $(grep -E 'jemalloc itself|ulimit' "$TMP/oom_kill.log")"

# One request's retries are one call.
seq_expect one_call "fail.probability=1;fail.times=2;$A" '..' '2*m100'
calls=$($REC get "$TMP/one_call.rec" injection call | paste -sd ' ')
[ "$calls" = '1 1' ] || check_later "fail.times=2 at attempt on 2 requests: the two injections into the first request have calls '$calls', expected '1 1'"
seq_expect nth_attempt "fail.nth=2;$A" '...' '3*m100'
expect_records nth_attempt injection 1
expect_eq "nth=2 at attempt: call of the injection" 2 "$($REC get "$TMP/nth_attempt.rec" injection call)"
check_done
