#!/bin/bash
# Background reclaim is woken on every entry into the slow path
# (wake_all_kswapds) and, once hopeless, again as soon as direct reclaim
# makes progress (shrink_node resets kswapd_failures), not by a timer.
# ks_revive: 2 threads fill a cache whose shrinker frees only for them
# (direct reclaim always makes progress) and never for the kswapd thread
# (its rounds are fruitless), under limit=4M;kswapd=1: some 10^5 requests
# enter the slow path. Asserted: nothing failed, kswapd ran (its shrinker
# calls), and it was woken again and again (10 times at least: a thread
# that gave up for a second after 16 fruitless rounds is woken once a
# second, some 1-3 times in this run). oom=wait: a worker that finds the
# shrinker "spent" by a fruitless kswapd call just before its own round
# waits for the next round instead of being killed.
source "$TESTS/lib.sh"
KS_REVIVE=$BUILD/tests/kswapd/ks_revive
[ -x "$KS_REVIVE" ] || fail "not built: $KS_REVIVE"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY

status=0
bounded 100 env LD_PRELOAD="$SHIM" GFP_POLICY='limit=4M;kswapd=1;oom=wait' \
	GFP_REPORT="$TMP/r.json" GFP_LOG="$TMP/log" "$KS_REVIVE" 2 100000 256 >"$TMP/out" 2>&1 || status=$?
[ "$status" = 0 ] || { cat "$TMP/out" "$TMP/log" >&2; fail "ks_revive: status $status"; }
python3 - "$TMP/r.json" "$TMP/out" <<'PY' || fail "the counters (above)"
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
out = json.load(open(sys.argv[2]))
print(f"# allocstall {v['allocstall']} kswapd_wake {v['kswapd_wake']} kswapd_rounds "
      f"{v['kswapd_rounds']} kswapd_hopeless {v['kswapd_hopeless']} kswapd scans {out['scans_elsewhere']}")
assert out["nulls"] == 0, f"{out['nulls']} requests failed"
assert v["allocstall"] > 10000, f"only {v['allocstall']} requests entered direct reclaim"
assert out["scans_elsewhere"] >= 1, "kswapd never called the shrinker"
assert v["kswapd_wake"] >= 10, (
    f"kswapd woken {v['kswapd_wake']} times for {v['allocstall']} slow-path entries")
PY
