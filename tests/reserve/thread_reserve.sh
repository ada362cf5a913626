#!/bin/bash
# reserve.thread on an unmodified program (uthread: only malloc and free).
# Under limit=8M the main thread fills the budget with malloc(4096) until
# NULL; a worker created before then asks for 12 x 4096. With
# reserve.thread=64K they are served from the worker's own reserve, at
# once; each draw writes a "reserve" record naming the thread's reserve.
# The main thread frees 1M, the worker frees its blocks (which tops its
# reserve up again), the budget is filled again, and the worker again gets
# 12 x 4096 (without the top-up only 16K would be left: 4 blocks).
# Without reserve.thread the worker gets nothing either time. The records
# and the report are checked in runs with GFP_REPORT (stats); the rounds
# also on the plain fast path.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

pol='limit=8M;oom=fail;retries=2;wait=1ms;warn.burst=1'
RS_REPORT=1 rs_run r "$pol;reserve.thread=64K" GFP_RECORD="$TMP/r.rec" "$UTHREAD"
rs_load r
RS_REPORT=1 rs_run z "$pol" "$UTHREAD"
rs_load z
# The plain fast path (no report): the same rounds.
rs_run p "$pol;reserve.thread=64K" "$UTHREAD"
rs_load p
want p "on the plain fast path the worker got $p_round1_ok and $p_round2_ok of 12" \
	"p_round1_ok == 12 && p_round2_ok == 12"

want r "the worker's first 12 x 4K under a full budget: $r_round1_ok served" "r_round1_ok == 12"
want r "the worker's 12 x 4K after its reserve was topped up: $r_round2_ok served" "r_round2_ok == 12"
want z "without reserve.thread the worker got $z_round1_ok and $z_round2_ok of 12" \
	"z_round1_ok == 0 && z_round2_ok == 0"
want r "the worker's 64K reserve was not held back from the main thread's fill ($r_fill1 vs $z_fill1)" \
	"z_fill1 - r_fill1 >= 15 && z_fill1 - r_fill1 <= 17"

/usr/bin/python3 - "$TMP/r.rec" "$TMP/r.json" "$r_worker_tid" <<'PY' || { rs_show r; fail "reserve records or report (above)"; }
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))["reserve"]
tid = int(sys.argv[3])
res = [r for r in recs if r["event"] == "reserve"]
bad = []
for r in res:
    for k in ("drawn", "left", "thread_left", "size", "flags", "frames", "tid", "site"):
        if k not in r:
            bad.append(f"record without {k}: {r}")
    if r.get("reserve") != "thread":
        bad.append(f"not the thread's reserve: {r.get('reserve')}")
    if not 0 < r.get("drawn", 0) <= 4096 or not 0 <= r.get("thread_left", -1) < 65536:
        bad.append(f"drawn/thread_left out of range: {r.get('drawn')}/{r.get('thread_left')}")
worker = [r for r in res if r["tid"] == tid]
if len(worker) != 24:
    bad.append(f"{len(worker)} reserve records of the worker, expected 24 (12 a round)")
elif not any("round_of" in f.get("symbol", "") for f in worker[0]["frames"]):
    bad.append(f"the worker's record does not name round_of: {worker[0]['frames']}")
# Each round draws down from a full reserve: 65536 - 4096 k left.
for rnd in (worker[:12], worker[12:]):
    left = [r["thread_left"] for r in rnd]
    if left != sorted(left, reverse=True) or left[-1] != 65536 - 12 * 4096:
        bad.append(f"a round of the worker left {left}, expected a full 64K drawn down to 16K")
if rep["thread_draws"] != len(res) or rep["draws"] != len(res) or rep["taken"] != 0:
    bad.append(f"report {rep} vs {len(res)} reserve records")
if sum(r["drawn"] for r in res) != rep["drawn"]:
    bad.append(f"records drew {sum(r['drawn'] for r in res)}, report {rep['drawn']}")
for b in bad:
    print("mismatch:", b)
print(f"# {len(res)} reserve records ({len(worker)} of the worker), report {rep}")
sys.exit(1 if bad else 0)
PY
note "fill $r_fill1 then $r_fill2 blocks; worker rounds: $r_round1_ok and $r_round2_ok of 12 (slowest $r_round1_max_ms / $r_round2_max_ms ms); without reserve.thread: $z_round1_ok and $z_round2_ok"
