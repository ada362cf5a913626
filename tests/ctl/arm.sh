#!/bin/bash
# Arming and disarming injection in a running, warmed-up server (ctl=1 and
# nothing else at start): main, two workers idle on a condition variable and
# a spinner that allocates all the time. Before any set no call fails; after
# `set fail.probability=1` every call of every thread fails (idle threads
# were poked to decide again); after `set fail.probability=0` none does;
# `set fail.probability=1 fail.times=5` fails exactly 5 calls in all; `get`
# follows each step. `report` is the GFP_REPORT JSON of the process now:
# its pid, the policy in force, and with stats=totals the totals as they
# stand (failures = the NULLs the program saw, calls growing between two
# reports).
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

ctl_start arm 'ctl=1' server -w 2 -s
ctl_read ready
expect_get fail.probability 0

# Before any set: nothing fails.
ctl_cmd 'run 500'
ctl_expect_field "before any set: NULLs of 3x500 calls" nulls 0
ctl_cmd 'spin 500'
ctl_expect_field "before any set: the spinner's NULLs" nulls 0

# Armed: every call after the set fails, in every thread.
gctl_expect 0 "$CTL_PID" set fail.probability=1
expect_eq "set's answer" ok "$(cat "$TMP/gctl.out")"
expect_get fail.probability 1
ctl_cmd epoch
ctl_cmd 'run 100'
ctl_expect_field "fail.probability=1: NULLs of 3x100 calls" nulls 300
ctl_cmd 'spin 100'
c=$(ctl_field calls)
ctl_expect_field "fail.probability=1: the spinner's NULLs = its calls" nulls "$c"
note "armed: 300 of 300 calls of main and 2 idle workers failed, $c of $c of the spinner"

# Disarmed: no call after the set fails.
gctl_expect 0 "$CTL_PID" set fail.probability=0
expect_get fail.probability 0
ctl_cmd epoch
ctl_cmd 'run 200'
ctl_expect_field "fail.probability=0: NULLs of 3x200 calls" nulls 0
ctl_cmd 'spin 200'
ctl_expect_field "fail.probability=0: the spinner's NULLs" nulls 0

# fail.times=5: exactly 5 failures in all, whoever makes the calls. The
# epoch starts before the set, so that every injection is counted in it.
ctl_cmd epoch
e=${CTL_LINE#epoch }
gctl_expect 0 "$CTL_PID" set fail.probability=1 fail.times=5
expect_get fail.times 5
ctl_cmd 'run 100'
ctl_cmd 'spin 100'
ctl_cmd "sum $e"
ctl_expect_field "fail.probability=1 fail.times=5: NULLs of every thread" nulls 5
note "fail.times=5: $(ctl_field nulls) NULLs in $(ctl_field calls) calls"
ctl_cmd 'run 100'
ctl_expect_field "fail.times=5 spent: NULLs of 3x100 more calls" nulls 0

# report: valid JSON of this process, its policy now.
gctl_expect 0 "$CTL_PID" report
/usr/bin/python3 - "$TMP/gctl.out" "$CTL_PID" <<'PY' || fail "report: $(head -c 600 "$TMP/gctl.out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["pid"] == int(sys.argv[2]), r["pid"]
assert r["policy"]["fail.probability"] == "1", r["policy"]
assert r["policy"]["fail.times"] == "5", r["policy"]
assert r["policy"]["ctl"] == "1", r["policy"]
assert set(r["totals"]) >= {"calls", "bytes", "failures"}, r["totals"]
PY
ctl_end

# With stats=totals the report's totals are the counts as they stand.
ctl_start rep 'ctl=1;stats=totals' server -w 1
ctl_read ready
gctl_expect 0 "$CTL_PID" report
cp "$TMP/gctl.out" "$TMP/rep1.json"
ctl_cmd epoch
gctl_expect 0 "$CTL_PID" set fail.probability=1 fail.times=7
ctl_cmd 'run 200'
ctl_expect_field "stats=totals, fail.times=7: NULLs of 2x200 calls" nulls 7
gctl_expect 0 "$CTL_PID" report
cp "$TMP/gctl.out" "$TMP/rep2.json"
/usr/bin/python3 - "$TMP/rep1.json" "$TMP/rep2.json" "$CTL_PID" <<'PY' || fail "stats=totals reports (above)"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for r in (a, b):
    assert r["pid"] == int(sys.argv[3]), ("pid", r["pid"])
ta, tb = a["totals"], b["totals"]
print("# report 1:", ta, "report 2:", tb)
assert ta["calls"] >= 600, ("calls before: warm-up of 1024 + 2x100", ta)
assert ta["failures"] == 0, ("failures before any set", ta)
assert tb["failures"] == 7, ("failures after fail.times=7", tb)
assert tb["calls"] - ta["calls"] >= 400, ("2x200 calls between the reports", ta, tb)
PY
ctl_end
