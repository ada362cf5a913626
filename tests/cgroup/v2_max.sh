#!/bin/bash
# memory.max is the hard limit and its OOM a memcg OOM (try_charge_memcg,
# mem_cgroup_oom), in a cgroup v2 of memory.max 16 MiB (a directory of
# v2-format files: see v2.sh):
#  * RETRY_MAYFAIL gets NULL (nomem), nobody is killed;
#  * NOFS gets the OOM kill: a memcg OOM kills for NOFS too (the !__GFP_FS
#    shortcut is the global OOM's), and the process is its only candidate;
#  * NOFAIL is charged past the limit where the charge would fail
#    (NOFAIL|RETRY_MAYFAIL; NOFAIL under oom=fail, after its OOM step);
#    plain NOFAIL under oom=kill meets the OOM kill first;
#  * ATOMIC is charged past it too (a memcg has no reserve: __GFP_HIGH is
#    forced), NOWAIT fails at once without a round of reclaim.
# memory_events in the report count what each met, and gfp-ctl's report
# shows them while the process runs. (On the old code NOFS
# looped for ever under a budget and NOFAIL|RETRY_MAYFAIL too; and the old
# code read no GFP_TEST_CGROUP.)
source "$TESTS/lib.sh"
source "$TESTS/cgroup/v2.sh"

v2_dir max $((16 * MiB)) max

v2_run mayfail 'limit=cgroup' "$MEMCG_PROG" fill 'KERNEL|RETRY_MAYFAIL' 65536 $((32 * MiB)) 2
[ "$STATUS" = 0 ] || { show mayfail; fail "RETRY_MAYFAIL: status $STATUS"; }
check mayfail "o['nulls'] >= 1 and $((12 * MiB)) <= o['total'] <= $((16 * MiB))" "RETRY_MAYFAIL gets NULL under memory.max"
check mayfail "r['memory_events']['max'] >= 1 and r['memory_events']['oom'] == 0" "max counted, no OOM"

v2_run nofs 'limit=cgroup' "$MEMCG_PROG" fill NOFS 4096 $((32 * MiB))
expect_eq "NOFS under memory.max: killed (SIGKILL)" 137 "$STATUS"
check nofs "'Memory cgroup out of memory: Killed process' in log and 'mode:NOFS' in log" "the memcg OOM report"
check nofs "'invoked oom-killer' in log and \"at its cgroup's memory.max\" in log" "the OOM report says why"

v2_run nofail_mayfail 'limit=cgroup' "$MEMCG_PROG" fill 'KERNEL|NOFAIL|RETRY_MAYFAIL' 65536 $((24 * MiB))
[ "$STATUS" = 0 ] || { show nofail_mayfail; fail "NOFAIL|RETRY_MAYFAIL: status $STATUS"; }
check nofail_mayfail "o['nulls'] == 0 and o['total'] == $((24 * MiB))" "NOFAIL|RETRY_MAYFAIL is charged past memory.max"
check nofail_mayfail "r['memory_events']['max'] >= 1 and r['memory_events']['oom'] == 0" "max counted, no OOM"

v2_run nofail_fail 'limit=cgroup;oom=fail' "$MEMCG_PROG" fill 'KERNEL|NOFAIL' 4096 $((20 * MiB))
[ "$STATUS" = 0 ] || { show nofail_fail; fail "NOFAIL, oom=fail: status $STATUS"; }
check nofail_fail "o['nulls'] == 0 and o['total'] == $((20 * MiB))" "NOFAIL is charged past memory.max once the OOM step gives up"
check nofail_fail "r['memory_events']['oom'] >= 1 and r['memory_events']['oom_kill'] == 0" "the OOM step ran and killed nobody"

v2_run nofail_kill 'limit=cgroup' "$MEMCG_PROG" fill 'KERNEL|NOFAIL' 4096 $((20 * MiB))
expect_eq "NOFAIL under oom=kill: the memcg OOM kills the process" 137 "$STATUS"

v2_run atomic 'limit=cgroup' "$MEMCG_PROG" fill ATOMIC 4096 $((20 * MiB))
[ "$STATUS" = 0 ] || { show atomic; fail "ATOMIC: status $STATUS"; }
check atomic "o['nulls'] == 0 and o['total'] == $((20 * MiB))" "ATOMIC is charged past memory.max"
check atomic "r['memory_events']['max'] >= 1 and r['memory_events']['oom'] == 0" "max counted (forced), no OOM"

v2_run nowait 'limit=cgroup' "$MEMCG_PROG" fill NOWAIT 4096 $((20 * MiB))
[ "$STATUS" = 0 ] || { show nowait; fail "NOWAIT: status $STATUS"; }
check nowait "o['nulls'] == 1 and o['total'] <= $((16 * MiB))" "NOWAIT gets NULL at memory.max"
check nowait "r['memory_events']['max'] == 0 and r['vmstat']['allocstall'] == 0" "NOWAIT reclaims nothing"

# gfp-ctl's report shows the same counters while the process runs.
export XDG_RUNTIME_DIR=$TMP/xdg
mkdir -m 0700 "$XDG_RUNTIME_DIR" || fail "mkdir $XDG_RUNTIME_DIR"
mkfifo "$TMP/ctl.in"
(exec env LD_PRELOAD="$SHIM" GFP_TEST_CGROUP="$CG" GFP_POLICY='limit=cgroup;ctl=1' GFP_LOG="$TMP/ctl.log" \
	"$MEMCG_PROG" fillwait 'KERNEL|RETRY_MAYFAIL' 65536 $((32 * MiB))) <"$TMP/ctl.in" >"$TMP/ctl.out" 2>&1 &
pid=$!
exec {ctl_in}>"$TMP/ctl.in"
for ((i = 0; i < 1200; i++)); do
	grep -q total "$TMP/ctl.out" && break
	kill -0 $pid 2>/dev/null || { show ctl; fail "the gfp-ctl target ended"; }
	sleep 0.05
done
rc=0
bounded 60 "$BUILD/tools/gfp-ctl" $pid report >"$TMP/ctl.json" 2>"$TMP/ctl.err" || rc=$?
exec {ctl_in}>&-
wait $pid || fail "the gfp-ctl target exited $?"
[ "$rc" = 0 ] || { cat "$TMP/ctl.err" >&2; fail "gfp-ctl report: status $rc"; }
python3 - "$TMP/ctl.json" <<'PY' || fail "gfp-ctl report (above)"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["memory_events"]
print(f"# gfp-ctl report: memory_events {e} memory_high {d['memory_high']}")
assert e["max"] >= 1 and e["oom"] == 0 and e["high"] == 0, e
PY
