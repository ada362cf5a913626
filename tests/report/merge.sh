#!/bin/bash
# gfp-report merge joins the two shards of the example's sweep into what
# the unsharded sweep wrote: the same results in the same order, the same
# outcome counts and the same findings with the same call paths (counts
# added); only "confirmed", a re-run of its own, and each run's "seconds"
# may differ. The parts' order does not matter, and the
# merged file prints with the program's frames symbolized.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
REPORT=$BUILD/tools/gfp-report
PROG=$BUILD/tests/example/inventory
INPUT=$SRC/tests/example/inventory.txt

"$SWEEP" --timeout 5 --json "$TMP/whole.json" -- "$PROG" "$INPUT" >/dev/null 2>&1
"$SWEEP" --timeout 5 --shard 1/2 --json "$TMP/s1.json" -- "$PROG" "$INPUT" >/dev/null 2>&1
"$SWEEP" --timeout 5 --shard 2/2 --json "$TMP/s2.json" -- "$PROG" "$INPUT" >/dev/null 2>&1
for f in whole s1 s2; do [ -s "$TMP/$f.json" ] || fail "gfp-sweep wrote no $f.json"; done

"$REPORT" merge "$TMP/s1.json" "$TMP/s2.json" >"$TMP/merged.json" 2>"$TMP/err"
expect_eq "merge: exit status" 0 "$?"
[ -s "$TMP/err" ] && fail "merge said: $(cat "$TMP/err")"
"$REPORT" merge -o "$TMP/merged2.json" "$TMP/s2.json" "$TMP/s1.json" ||
	fail "merge -o failed"
cmp -s "$TMP/merged.json" "$TMP/merged2.json" || fail "the parts' order changed the merge"

/usr/bin/python3 - "$TMP/whole.json" "$TMP/merged.json" <<'PY' || fail "merge differs from the whole"
import collections, json, sys
whole, merged = (json.load(open(p)) for p in sys.argv[1:])
bad = []
if merged.get("shard") != "1/1":
    bad.append(f"shard {merged.get('shard')!r}, not '1/1'")
if set(whole) != set(merged):
    bad.append(f"keys differ: {set(whole) ^ set(merged)}")
# a run's wall time differs from one sweep to the next
for r in whole["results"] + merged["results"]:
    r.pop("seconds", None)
for k in ("gfp_sweep", "mode", "program", "eligible_calls", "sites", "runs", "outcomes", "results"):
    if whole.get(k) != merged.get(k):
        bad.append(f"{k}: whole {whole.get(k)!r}\n   merged {merged.get(k)!r}")
recount = collections.Counter(r["outcome"] for r in merged["results"])
if {k: v for k, v in merged["outcomes"].items() if v} != dict(recount):
    bad.append(f"outcomes {merged['outcomes']} are not the results' {dict(recount)}")
strip = lambda gs: [{k: v for k, v in g.items() if k != "confirmed"} for g in gs]
if strip(whole["findings"]) != strip(merged["findings"]) or not whole["findings"]:
    bad.append(f"findings: whole {strip(whole['findings'])}\n   merged {strip(merged['findings'])}")
# shard K/2 ran the runs K-1, K+1, ...: a call path with runs of both
runs_of = lambda f, p: {i % 2 for i, r in enumerate(merged["results"])
                        if r["key"] == f["key"] and r["injected_site"] == p["site"]}
if not any(runs_of(f, p) == {0, 1} for f in merged["findings"] for p in f["call_paths"]):
    bad.append("no call path with runs in both shards: the merge of call paths is not tested")
print(f"# {len(merged['results'])} results, {len(merged['findings'])} findings, "
      f"outcomes {merged['outcomes']}")
if bad:
    sys.exit("FAIL: " + "\n".join(bad))
PY

# The merged file prints like any sweep, the program found by its path.
"$REPORT" "$TMP/merged.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "printing the merge: exit status" 0 "$?"
expect_contains "shard 1/1" "$TMP/out" 'gfp-sweep [0-9.]+, sites mode, shard 1/1:'
want=$(/usr/bin/python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))["outcomes"]
print("outcomes:" + "".join(f" {k} {v}" for k, v in o.items() if v))' "$TMP/whole.json")
expect_eq "outcome line" "$want" "$(grep '^outcomes:' "$TMP/out")"
expect_contains "findings with reproducers" "$TMP/out" \
	"reproduce \([a-zA-Z ]+\): (cd -- [^ ]+ && )?[^ ]*gfp-run --no-follow --policy 'junk=64K;fail\.site="
expect_contains "inline chain of the example" "$TMP/out" \
	'^    make_title inventory\.c:[0-9]+ < main inventory\.c:[0-9]+ \(inventory\+0x[0-9a-f]+\)$'

# Abort sites (not findings) merge too: abortprog's xmalloc aborts from two
# callers; the shards' abort sites, joined, are the unsharded sweep's.
ABORT=$BUILD/tests/sweep/abortprog
"$SWEEP" --timeout 60 --json "$TMP/aw.json" -- "$ABORT" </dev/null >/dev/null 2>&1
"$SWEEP" --timeout 60 --shard 1/2 --json "$TMP/a1.json" -- "$ABORT" </dev/null >/dev/null 2>&1
"$SWEEP" --timeout 60 --shard 2/2 --json "$TMP/a2.json" -- "$ABORT" </dev/null >/dev/null 2>&1
"$REPORT" merge -o "$TMP/am.json" "$TMP/a1.json" "$TMP/a2.json" || fail "merge of abortprog failed"
/usr/bin/python3 - "$TMP/aw.json" "$TMP/am.json" "$TMP/a1.json" "$TMP/a2.json" <<'PY' || fail "abort sites: merge differs"
import json, sys
whole, merged, a1, a2 = (json.load(open(p)) for p in sys.argv[1:])
if not (a1["abort_sites"] and a2["abort_sites"]):
    sys.exit(f"FAIL: a shard without abort sites ({len(a1['abort_sites'])}, {len(a2['abort_sites'])}): the test proves nothing")
if len(whole["abort_sites"]) != 2 or whole["abort_sites"] != merged["abort_sites"]:
    sys.exit(f"FAIL: abort sites: whole {whole['abort_sites']}\n   merged {merged['abort_sites']}")
print(f"# abort sites merged: {[s['count'] for s in merged['abort_sites']]}")
PY
