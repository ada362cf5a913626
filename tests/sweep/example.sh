#!/bin/bash
# gfp-sweep on the bundled example (tests/example/inventory.c) finds each of
# its four planted error-path bugs - a NULL dereference, a crash only after
# the loop's first iteration, a hang, a silent data loss - in both modes, as
# four findings, every finding confirmed by its reproducer; sites finds every
# finding nth finds, with far fewer runs; the JSON is valid; shards add up
# to the whole sweep.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/example/inventory
INPUT=$SRC/tests/example/inventory.txt

"$SWEEP" --timeout 5 --json "$TMP/sites.json" -- "$PROG" "$INPUT" >"$TMP/sites.txt" 2>&1
expect_eq "sites: exit status with findings" 1 "$?"
"$SWEEP" --timeout 5 --mode nth --json "$TMP/nth.json" -- "$PROG" "$INPUT" >"$TMP/nth.txt" 2>&1
expect_eq "nth: exit status with findings" 1 "$?"

/usr/bin/python3 - "$TMP/sites.json" "$TMP/nth.json" <<'PY' || fail "see above"
import json, sys
def load(p):
    r = json.load(open(p))
    for k in ("mode", "program", "eligible_calls", "sites", "runs", "outcomes", "results",
              "findings"):
        assert k in r, f"{p}: no '{k}'"
    return r
sites, nth = load(sys.argv[1]), load(sys.argv[2])
bad = []
for r in (sites, nth):
    f = r["findings"]
    kinds = sorted(x["outcome"] for x in f)
    # BUG 1 and 2 crash in two places, BUG 3 hangs, BUG 4 loses a line:
    # one finding each, whichever allocation failed.
    if kinds != ["crash", "crash", "hang", "silent"]:
        bad.append(f"{r['mode']}: findings {[x['title'] for x in f]}, expected the four bugs")
    crashes = [x for x in f if x["outcome"] == "crash"]
    if len({tuple(x["state"]) for x in crashes}) != len(crashes):
        bad.append(f"{r['mode']}: crash states {[x['state'] for x in crashes]}")
    if any(not x["confirmed"] for x in f):
        bad.append(f"{r['mode']}: unconfirmed finding {[x for x in f if not x['confirmed']]}")
# BUG 2: a crash only when the failure hits after the loop's first iteration.
later = [x for x in sites["results"] if x["outcome"] == "crash" and x["hit"] >= 2]
first = {x["site"] for x in sites["results"] if x["outcome"] == "crash" and x["hit"] == 1}
if not [x for x in later if x["site"] not in first]:
    bad.append("sites: no site that crashes only on a later hit")
if not sites["runs"] * 2 <= nth["runs"]:
    bad.append(f"sites used {sites['runs']} runs, nth {nth['runs']}: expected far fewer")
# sites finds what nth finds: every finding of nth's.
key = lambda r: {(x["outcome"], x["key"]) for x in r["findings"]}
if key(nth) - key(sites):
    bad.append(f"nth found {sorted(key(nth) - key(sites))}, sites did not")
print(f"# runs: sites {sites['runs']}, nth {nth['runs']} for {nth['eligible_calls']} calls "
      f"at {sites['sites']} sites; findings: sites {len(key(sites))}, nth {len(key(nth))}")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY

# A failed allocation's frame names the line of its call (a return address
# is looked up one byte back), and gfp-report prints the JSON's frames as
# gfp-sweep printed them.
L_ASPRINTF=$(grep -n 'n = asprintf(&line,' "$SRC/tests/example/inventory.c" | cut -d: -f1)
expect_contains "BUG 4: the asprintf call's line" "$TMP/sites.txt" \
	"^    report inventory\.c:$L_ASPRINTF < main inventory\.c:[0-9]+ \(inventory\+0x[0-9a-f]+\)\$"
program_frames() { grep -E '^    .* \(inventory\+0x[0-9a-f]+\)$' | sort -u; }
program_frames <"$TMP/sites.txt" >"$TMP/sweep.frames"
"$BUILD/tools/gfp-report" "$TMP/sites.json" 2>/dev/null | program_frames >"$TMP/report.frames"
[ -s "$TMP/sweep.frames" ] && cmp -s "$TMP/sweep.frames" "$TMP/report.frames" ||
	fail "gfp-sweep and gfp-report name the program's frames differently: $(diff "$TMP/sweep.frames" "$TMP/report.frames")"

# BUG 2 crashes at one place from two allocations: one finding with two
# call paths, each listed with its reproducer, in gfp-sweep's text and
# gfp-report's alike; each finding's first line names the first failure point.
for f in sweep report; do
	[ $f = sweep ] && cp "$TMP/sites.txt" "$TMP/digest.txt" ||
		"$BUILD/tools/gfp-report" "$TMP/sites.json" >"$TMP/digest.txt" 2>/dev/null
	expect_contains "$f: the findings' lines" "$TMP/digest.txt" \
		"^  \[[0-9]+\] crash SIGSEGV in row_free.* \(2 call paths, 4 runs\)$"
	expect_contains "$f: a finding's first failure point" "$TMP/digest.txt" \
		"^  crash .* in 1 call path, 1 run; the first: allocation failure at site [0-9a-f]{16}, hit [0-9]+$"
	/usr/bin/python3 - "$TMP/digest.txt" "$TMP/sites.json" <<'PY' || fail "$f: BUG 2's call paths"
import json, re, sys
text, run = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
bad = []
two = [(k, x) for k, x in enumerate(run["findings"]) if len(x["call_paths"]) > 1]
if len(two) != 1 or two[0][1]["state"][0] != "row_free":
    bad.append(f"findings with more than one call path: {[x['title'] for _, x in two]}")
for k, x in two:
    listed = re.findall(rf"^    \[{k + 1}\.(\d+)\] (.*), site ([0-9a-f]{{16}}), hit \d+: (\d+) runs?\n"
                        r"          reproduce: (.*)$", text, re.M)
    want = [(str(i + 1), p["site"], str(p["count"]), p["reproducer"])
            for i, p in enumerate(x["call_paths"])]
    if [(i, site, n, repro) for i, _, site, n, repro in listed] != want:
        bad.append(f"[{k + 1}]'s call paths as printed {listed}\n  the JSON's {want}")
    if len({c for _, c, _, _, _ in listed}) != 2 or not all("build_rows" in c for _, c, _, _, _ in listed):
        bad.append(f"[{k + 1}]'s call paths are not build_rows' two allocations: {listed}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
done

# A printed reproducer reproduces: run the first crash finding's command.
line=$(grep -m1 -A40 '\] crash' "$TMP/sites.txt" | grep -m1 'reproduce (confirmed): ') || fail "no confirmed crash reproducer printed"
cmd=${line#*reproduce (confirmed): }
cmd=${cmd/ gfp-run / $GFP_RUN } # an installed gfp-run prints bare
eval "$cmd" >/dev/null 2>&1
st=$?
[ "$st" -gt 128 ] || fail "reproducer '$cmd' exited $st, not by a signal"

# Shards: 1/2 and 2/2 together are the whole sweep.
"$SWEEP" --timeout 5 --shard 1/2 --json "$TMP/s1.json" -- "$PROG" "$INPUT" >/dev/null 2>&1
"$SWEEP" --timeout 5 --shard 2/2 --json "$TMP/s2.json" -- "$PROG" "$INPUT" >/dev/null 2>&1
/usr/bin/python3 - "$TMP/sites.json" "$TMP/s1.json" "$TMP/s2.json" <<'PY' || fail "shards differ from the whole"
import json, sys
key = lambda r: sorted((x["site"], x["hit"], x["outcome"]) for x in r["results"])
whole, a, b = (json.load(open(p)) for p in sys.argv[1:])
merged = sorted(key(a) + key(b))
if merged != key(whole):
    sys.exit(f"FAIL: shards {len(merged)} results, whole {len(key(whole))}; "
             f"differences: {set(merged) ^ set(key(whole))}")
PY
