#!/bin/bash
# gfp-sweep on the bundled example (tests/example/inventory.c) finds each of
# its four planted error-path bugs - a NULL dereference, a crash only after
# the loop's first iteration, a hang, a silent data loss - in both modes,
# every finding confirmed by its reproducer; sites finds every (injection
# site, outcome) group nth finds, with far fewer runs; the JSON is valid;
# shards add up to the whole sweep.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/example/inventory
INPUT=$SRC/tests/example/inventory.txt

"$SWEEP" --json "$TMP/sites.json" -- "$PROG" "$INPUT" >"$TMP/sites.txt" 2>&1
expect_eq "sites: exit status with findings" 1 "$?"
"$SWEEP" --mode nth --json "$TMP/nth.json" -- "$PROG" "$INPUT" >"$TMP/nth.txt" 2>&1
expect_eq "nth: exit status with findings" 1 "$?"

/usr/bin/python3 - "$TMP/sites.json" "$TMP/nth.json" <<'PY' || fail "see above"
import json, sys
def load(p):
    r = json.load(open(p))
    for k in ("mode", "program", "eligible_calls", "sites", "runs", "outcomes", "results", "groups"):
        assert k in r, f"{p}: no '{k}'"
    return r
sites, nth = load(sys.argv[1]), load(sys.argv[2])
bad = []
for r in (sites, nth):
    g = r["groups"]
    kinds = {x["outcome"] for x in g}
    crashes = [x for x in g if x["outcome"] == "crash"]
    for want in ("crash", "hang", "silent"):
        if want not in kinds:
            bad.append(f"{r['mode']}: no {want} group")
    if len({x["crash_site"] for x in crashes}) < 2:
        bad.append(f"{r['mode']}: expected two distinct crash sites (BUG 1 and 2), got "
                   f"{[x['crash_site'] for x in crashes]}")
    if any(not x["confirmed"] for x in g):
        bad.append(f"{r['mode']}: unconfirmed group {[x for x in g if not x['confirmed']]}")
# BUG 2: a crash only when the failure hits after the loop's first iteration.
later = [x for x in sites["results"] if x["outcome"] == "crash" and x["hit"] >= 2]
first = {x["site"] for x in sites["results"] if x["outcome"] == "crash" and x["hit"] == 1}
if not [x for x in later if x["site"] not in first]:
    bad.append("sites: no site that crashes only on a later hit")
if not sites["runs"] * 2 <= nth["runs"]:
    bad.append(f"sites used {sites['runs']} runs, nth {nth['runs']}: expected far fewer")
# sites finds what nth finds: every (injection site, outcome) of nth's groups.
key = lambda r: {(x["site"], x["outcome"]) for x in r["groups"]}
if key(nth) - key(sites):
    bad.append(f"nth found {sorted(key(nth) - key(sites))}, sites did not")
print(f"# runs: sites {sites['runs']}, nth {nth['runs']} for {nth['eligible_calls']} calls "
      f"at {sites['sites']} sites; groups (site, outcome): sites {len(key(sites))}, "
      f"nth {len(key(nth))}")
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

# BUG 2 crashes at one place from two failure points: the digest says so,
# in gfp-sweep's text and gfp-report's alike, and group headers name the hit.
for f in sweep report; do
	[ $f = sweep ] && cp "$TMP/sites.txt" "$TMP/digest.txt" ||
		"$BUILD/tools/gfp-report" "$TMP/sites.json" >"$TMP/digest.txt" 2>/dev/null
	expect_contains "$f: the crash-site digest" "$TMP/digest.txt" \
		"^crash sites that several groups share \(one bug, many failure points\):$"
	expect_contains "$f: the shared crash site" "$TMP/digest.txt" \
		"^    row_free inventory\.c:[0-9]+ < .* \(inventory\+0x[0-9a-f]+\)$"
	expect_contains "$f: group headers with the hit" "$TMP/digest.txt" \
		"^\[1\] .* allocation failure at site [0-9a-f]{16}, hit [0-9]+$"
	# Each shared site names its first group and that group's reproducer.
	/usr/bin/python3 - "$TMP/digest.txt" "$TMP/sites.json" <<'PY' || fail "$f: the digest's first groups"
import json, re, sys
text, run = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
digest = text.split("crash sites that several groups share")[-1]
found = re.findall(r"^  (\d+) groups, (\d+) runs, first \[(\d+)\]:\n    .*\n    reproduce: (.*)$",
                   digest, re.M)
bad = [] if found else ["no digest entry with its first group and reproducer"]
for n, runs, first, repro in found:
    g = run["groups"][int(first) - 1]
    same = [k for k, h in enumerate(run["groups"]) if h.get("crash_site") == g["crash_site"]]
    if g["outcome"] != "crash" or same[0] != int(first) - 1 or len(same) != int(n):
        bad.append(f"first [{first}] is not the first of the {n} groups at {g.get('crash_site')}: {same}")
    if sum(run["groups"][k]["count"] for k in same) != int(runs):
        bad.append(f"[{first}]: {runs} runs, the groups have others")
    if not repro.endswith(g["reproducer"].split(" --policy ")[-1]):
        bad.append(f"[{first}]: reproduce {repro!r}, the group's {g['reproducer']!r}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
done

# A printed reproducer reproduces: run the first crash group's command.
line=$(grep -m1 -A40 '\] crash' "$TMP/sites.txt" | grep -m1 'reproduce (confirmed): ') || fail "no confirmed crash reproducer printed"
cmd=${line#*reproduce (confirmed): }
cmd=${cmd/ gfp-run / $GFP_RUN } # an installed gfp-run prints bare
eval "$cmd" >/dev/null 2>&1
st=$?
[ "$st" -gt 128 ] || fail "reproducer '$cmd' exited $st, not by a signal"

# Shards: 1/2 and 2/2 together are the whole sweep.
"$SWEEP" --shard 1/2 --json "$TMP/s1.json" -- "$PROG" "$INPUT" >/dev/null 2>&1
"$SWEEP" --shard 2/2 --json "$TMP/s2.json" -- "$PROG" "$INPUT" >/dev/null 2>&1
/usr/bin/python3 - "$TMP/sites.json" "$TMP/s1.json" "$TMP/s2.json" <<'PY' || fail "shards differ from the whole"
import json, sys
key = lambda r: sorted((x["site"], x["hit"], x["outcome"]) for x in r["results"])
whole, a, b = (json.load(open(p)) for p in sys.argv[1:])
merged = sorted(key(a) + key(b))
if merged != key(whole):
    sys.exit(f"FAIL: shards {len(merged)} results, whole {len(key(whole))}; "
             f"differences: {set(merged) ^ set(key(whole))}")
PY
