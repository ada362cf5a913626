#!/bin/bash
# A campaign split by --shard auto (GFP_SHARD_INDEX and GFP_SHARD_COUNT, as a
# GitHub matrix passes them) runs a part of every target, each part with a
# state file of its own beside the campaign file; gfp-report merge joins the
# parts' JSON target by target into the unsharded campaign's results and
# findings, and gfp-report prints the merged campaign target by target.
# A campaign's part and a sweep's do not merge.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
REPORT=$BUILD/tools/gfp-report
INV=$BUILD/tests/example/inventory
OUTPROG=$BUILD/tests/sweep/outprog
unset PARALLEL_SEQ JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID CI_NODE_INDEX
cat >"$TMP/camp.json" <<END
[{"id": "inventory", "argv": ["$INV", "$SRC/tests/example/inventory.txt"]},
 {"id": "binary", "argv": ["$OUTPROG", "binary"]}]
END
"$SWEEP" --timeout 5 -j 2 --campaign "$TMP/camp.json" --json "$TMP/whole.json" >"$TMP/whole.out" 2>&1
[ $? = 1 ] || fail "the unsharded campaign: $(tail -3 "$TMP/whole.out")"
for k in 0 1; do
	GFP_SHARD_INDEX=$k GFP_SHARD_COUNT=2 "$SWEEP" --timeout 5 -j 1 --shard auto --campaign "$TMP/camp.json" \
		--json "$TMP/part$k.json" >"$TMP/part$k.out" 2>&1 &
done
wait
for k in 1 2; do
	[ -s "$TMP/camp.json.shard-$k-of-2.state" ] || fail "no state camp.json.shard-$k-of-2.state"
done
"$REPORT" merge -o "$TMP/merged.json" "$TMP/part0.json" "$TMP/part1.json" || fail "merge failed"
/usr/bin/python3 - "$TMP" <<'PY' || fail "see above"
import json, sys
tmp = sys.argv[1]
whole, merged = (json.load(open(f"{tmp}/{n}.json")) for n in ("whole", "merged"))
parts = [json.load(open(f"{tmp}/part{k}.json")) for k in (0, 1)]
if [p["shard"] for p in parts] != ["1/2", "2/2"] or merged["shard"] != "1/1":
    sys.exit(f"FAIL: shards {[p['shard'] for p in parts]}, merged {merged['shard']}")
def view(t):
    return (t["id"], t["state"], t["program"], t["runs"], t["outcomes"],
            [{k: v for k, v in r.items() if k != "seconds"} for r in t["results"]],
            [(g["outcome"], g["key"], g["site"], g["crash_site"], g["count"], g["first_run"],
              [(p["site"], p["count"], p["first_run"]) for p in g["call_paths"]])
             for g in t["findings"]])
if [view(t) for t in merged["targets"]] != [view(t) for t in whole["targets"]]:
    sys.exit("FAIL: the merged targets differ from the unsharded campaign's")
if (merged["runs"], merged["outcomes"]) != (whole["runs"], whole["outcomes"]):
    sys.exit(f"FAIL: totals {merged['runs']} {merged['outcomes']}, unsharded "
             f"{whole['runs']} {whole['outcomes']}")
print(f"# {whole['runs']} runs in {len(whole['targets'])} targets, merged as unsharded")
PY
"$REPORT" "$TMP/merged.json" >"$TMP/print.out" 2>&1 || fail "gfp-report: $(tail -3 "$TMP/print.out")"
expect_eq "gfp-report's targets" "== target inventory: done ==,== target binary: done ==" \
	"$(grep '^== target' "$TMP/print.out" | paste -sd,)"
"$SWEEP" --timeout 60 --mode nth --max-runs 2 --json "$TMP/one.json" -- "$OUTPROG" binary >/dev/null 2>&1
"$REPORT" merge -o "$TMP/bad.json" "$TMP/part0.json" "$TMP/one.json" 2>"$TMP/err"
[ $? = 2 ] || fail "a campaign's part and a sweep's merged"
expect_contains "the refusal" "$TMP/err" "is a campaign's result but .* is one sweep's"
