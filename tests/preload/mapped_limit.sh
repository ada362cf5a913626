#!/bin/bash
# Under limit=64M the budget sees what a program maps itself: a pool that
# maps and writes 1 MiB at a time, a reservation committed 1 MiB at a time
# (mprotect), and a heap grown by sbrk and by brk all get ENOMEM near 64 MiB
# (without the shim, or with limit.mapped=0, the same programs get all they
# ask for), with the shim's allocation failure report (a 1 MiB mapping is
# costly: one round, then the failure) and a failure record naming the call.
# A break given back is credited: it can grow again by as much. Small
# mappings are too small to fail: they loop to the OOM step (killed by
# default, ENOMEM with oom=fail), or wait, with oom=wait, until another
# thread unmaps; a NORETRY context (GFP_RULES) fails them at once.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/map_prog
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY
MiB=$((1 << 20))
MAX=$((160 * MiB))

# run TAG POLICY ARGS...: map_prog ARGS under the shim with POLICY; its
# output, log, records and report in $TMP/TAG.*; sets rc.
run() {
	local tag=$1 policy=$2
	shift 2
	rc=0
	bounded 60 env GFP_POLICY="$policy" GFP_LOG="$TMP/$tag.log" GFP_RECORD="$TMP/$tag.rec" \
		GFP_REPORT="$TMP/$tag.json" LD_PRELOAD="$SHIM" "$PROG" "$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err" || rc=$?
}

# check TAG ENTRY: what the failure looked like (python: no awk or grep dialects).
check() {
	/usr/bin/python3 - "$TMP" "$1" "$2" <<'PY' || fail "$1: (above)"
import json, os, sys
tmp, tag, entry = sys.argv[1:4]
out = json.loads(open(os.path.join(tmp, tag + ".out")).readline())
MiB = 1 << 20
assert out["errno"] == 12, f"errno {out['errno']}, expected ENOMEM: {out}"
assert 40 * MiB <= out["total"] <= 64 * MiB, f"held {out['total'] / MiB:.1f} MiB at the failure"
# The break fails twice: at the limit, and again after half came back.
n = 2 if "again" in out else 1
log = open(os.path.join(tmp, tag + ".log")).read()
fails = [l for l in log.splitlines() if "allocation failure" in l]
assert len(fails) == 1, log  # warn.burst=1: one report per 10 s
assert "size:1048576 " in fails[0] and "costly" in fails[0], fails[0]
recs = [json.loads(l) for l in open(os.path.join(tmp, tag + ".rec"))]
f = [r for r in recs if r["event"] == "failure"]
assert len(f) == n and all(r["entry"] == entry and r["size"] == MiB for r in f), recs
rep = json.load(open(os.path.join(tmp, tag + ".json")))
assert rep["entries"][entry]["failures"] == n, rep["entries"]
assert rep["totals"]["failures"] >= 1, rep["totals"]
if "again" in out:  # half the break given back, then grown again
    assert out["errno_again"] == 12, out
    assert out["back"] - MiB <= out["again"] <= out["back"] + MiB, out
print(f"# {tag}: {out['total'] / MiB:.0f} MiB, then ENOMEM: {fails[0].split(': ', 2)[2][:60]}")
PY
}

for mode in fill:mmap commit:mprotect sbrk:sbrk brk:brk; do
	run "${mode%:*}" 'limit=64M' "${mode%:*}" $MiB $MAX
	[ "$rc" = 0 ] || { cat "$TMP/${mode%:*}.err" "$TMP/${mode%:*}.log" >&2; fail "${mode%:*}: status $rc"; }
	check "${mode%:*}" "${mode#*:}"
done

# Without the shim, and with limit.mapped=0, nothing stops the pool.
"$PROG" fill $MiB $MAX >"$TMP/plain.out" || fail "plain run"
expect_eq "without the shim" "{\"total\":$MAX,\"errno\":0}" "$(cat "$TMP/plain.out")"
run off 'limit=64M;limit.mapped=0' fill $MiB $MAX
expect_eq "limit.mapped=0: status" 0 "$rc"
expect_eq "limit.mapped=0" "{\"total\":$MAX,\"errno\":0}" "$(cat "$TMP/off.out")"

# Small mappings loop: the OOM step kills (default), or fails (oom=fail).
run small 'limit=16M' fill 16384 $MAX
expect_eq "16 KiB mappings past the limit: killed by the OOM step (SIGKILL)" 137 "$rc"
expect_contains "the OOM report" "$TMP/small.log" 'invoked oom-killer: size=16384 order=2 mode:KERNEL'
run small_fail 'limit=16M;oom=fail' fill 16384 $MAX
expect_eq "oom=fail: status" 0 "$rc"
expect_contains "oom=fail: ENOMEM" "$TMP/small_fail.out" '"errno":12'
expect_contains "oom=fail: the failure report" "$TMP/small_fail.log" 'allocation failure: size:16384 .*OOM step gave up'
# A small mapping waits for memory (oom=wait: as long as it takes) and gets
# what another thread unmaps. The pool before it is NORETRY (a rule on its
# function): it stops where 16 KiB no longer fit.
rc=0
bounded 60 env GFP_RULES='sym:fill_until_refused* => NORETRY' \
	GFP_POLICY='limit=16M;oom=wait;stats=sites' GFP_REPORT="$TMP/waiter.json" GFP_LOG="$TMP/waiter.log" \
	LD_PRELOAD="$SHIM" "$PROG" wait 16384 $MAX >"$TMP/waiter.out" 2>&1 || rc=$?
expect_eq "waiter: status" 0 "$rc"
expect_contains "waiter: the pool was refused, the waiting mapping served" "$TMP/waiter.out" \
	'"errno":12,"waiter":0}'
/usr/bin/python3 - "$TMP/waiter.json" <<'PY' || fail "waiter: it did not wait (above)"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["allocinfo"] if r.get("symbol", "").startswith("small_map+")]
assert len(rows) == 1 and rows[0]["mapped"] and rows[0]["calls"] == 1, rows
assert rows[0]["retries"] >= 1 and rows[0]["failures"] == 0, rows
print(f"# waiter: {rows[0]['retries'] + 1} rounds, {rows[0]['max_stall_us']} us")
PY
# The context is the thread's, as a malloc's: a rule makes them NORETRY.
rc=0
bounded 60 env GFP_RULES='size<64K => NORETRY' GFP_POLICY='limit=16M' GFP_LOG="$TMP/rule.log" \
	LD_PRELOAD="$SHIM" "$PROG" fill 16384 $MAX >"$TMP/rule.out" 2>&1 || rc=$?
expect_eq "NORETRY: status" 0 "$rc"
expect_contains "NORETRY: ENOMEM" "$TMP/rule.out" '"errno":12'
expect_contains "NORETRY: the failure report" "$TMP/rule.log" 'allocation failure: size:16384 order:2, mode:KERNEL\|NORETRY'
