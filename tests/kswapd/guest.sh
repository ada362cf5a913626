#!/bin/bash
# The reclaim thread is the program's guest: once it runs (named gfp-kswapd)
# it blocks the program's signals (SIGUSR1 sent to the process 20 times is
# always handled on a program thread), takes no reserve.thread of its own
# (the budget holds exactly the main thread's 256 KiB), and what it frees
# through the program's shrinker counts (after the program frees the rest
# of its cache the budget sees almost nothing live). And a fork: the child
# has no such thread until it passes the low watermark itself, then makes
# its own, and reports its wakes.
source "$TESTS/lib.sh"
KS_GUEST=$BUILD/tests/kswapd/ks_guest
[ -x "$KS_GUEST" ] || fail "not built: $KS_GUEST"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY
MiB=$((1 << 20))

status=0
env LD_PRELOAD="$SHIM" GFP_POLICY='limit=16M;kswapd=1;reserve.thread=256K' GFP_LOG="$TMP/guest.log" \
	"$KS_GUEST" guest $((32 * MiB)) >"$TMP/guest.out" 2>&1 || status=$?
[ "$status" = 0 ] || { cat "$TMP/guest.out" "$TMP/guest.log" >&2; fail "guest: status $status"; }
python3 - "$TMP/guest.out" <<'PY' || fail "guest (above)"
import json, sys
g = json.load(open(sys.argv[1]))
print("#", g)
assert g["kswapd_tid"] > 0, "no thread named gfp-kswapd"
assert all(g["blocks"].values()), f"the thread lets signals in: {g['blocks']}"
assert g["handled"] == 20 and g["handled_on_kswapd"] == 0, g
assert g["freed_elsewhere"] > 0, "the thread never called the shrinker"
assert g["reserved"] == 256 << 10, f"reserved {g['reserved']}: the thread took a reserve.thread"
assert 0 <= g["live_after_drop"] < 1 << 20, \
    f"{g['live_after_drop']} bytes live after the cache was freed: the thread's frees went uncounted"
PY

status=0
env LD_PRELOAD="$SHIM" GFP_POLICY='limit=16M;kswapd=1;stats=totals' GFP_REPORT="$TMP/fork.%p.json" \
	GFP_LOG="$TMP/fork.log" "$KS_GUEST" fork $((32 * MiB)) >"$TMP/fork.out" 2>&1 || status=$?
[ "$status" = 0 ] || { cat "$TMP/fork.out" "$TMP/fork.log" >&2; fail "fork: status $status"; }
python3 - "$TMP/fork.out" "$TMP" <<'PY' || fail "fork (above)"
import glob, json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
child, parent = lines
print("#", child, parent)
assert parent["who"] == "parent" and parent["kswapd"] > 0 and parent["child_status"] == 0, parent
assert child["kswapd_before"] == 0, "the child has the parent's thread"
assert child["kswapd_after"] > 0 and child["kswapd_after"] != parent["kswapd"], child
reports = [json.load(open(f)) for f in glob.glob(sys.argv[2] + "/fork.*.json")]
assert len(reports) == 2, f"{len(reports)} reports"
assert all(r["vmstat"]["kswapd_wake"] >= 1 for r in reports), [r["vmstat"] for r in reports]
PY
