#!/bin/bash
# gfp-sweep's junk fill (junk=64K in every run's policy: the first 64 KiB of
# each new block and of what a realloc adds, not frees) finds what
# jemalloc's junk:true (the fill of every allocated and freed byte, which the
# runs had before) found:
#   * uninitprog's two error paths that free pointers they never wrote, one
#     in a fresh malloc block (table_load), one in the slots a realloc added
#     (list_grow), are crash findings; without any fill (--no-junk) they
#     pass unnoticed, so the fill is what finds them;
#   * the findings (injection site, outcome) on uninitprog, the bundled
#     example and jq (a real program whose crash needs the fill) are the
#     same with either fill.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
UNINIT=$BUILD/tests/sweep/uninitprog
EXAMPLE=$BUILD/tests/example/inventory
unset MALLOC_CONF GFP_POLICY GFP_RECORD GFP_REPORT GFP_LOG

sweep() { # TAG [ENV...] -- SWEEP-ARGS...: the sweep's JSON in $TMP/TAG.json
	local tag=$1 envs=()
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$SWEEP" -j 2 --timeout 20 --json "$TMP/$tag.json" "$@" \
		>"$TMP/$tag.out" 2>"$TMP/$tag.err"
	local st=$?
	[ "$st" = 0 ] || [ "$st" = 1 ] || { cat "$TMP/$tag.err" >&2; fail "$tag: gfp-sweep exited $st"; }
}

sweep uninit -- -- "$UNINIT"
sweep uninit_none -- --no-junk -- "$UNINIT"
sweep uninit_je MALLOC_CONF=junk:true -- --no-junk -- "$UNINIT"

/usr/bin/python3 - "$TMP" <<'PY' || fail "see above"
import json, sys
tmp = sys.argv[1]
bad = []

def crashes(tag):
    """The functions of the crash findings' failed allocations."""
    r = json.load(open(f"{tmp}/{tag}.json"))
    out = set()
    for g in r["findings"]:
        if g["outcome"] != "crash":
            continue
        funcs = [f["function"] for f in g["injection_frames"]]
        funcs += [p["caller"]["function"] for p in g["call_paths"] if p["caller"]]
        out |= {f for f in funcs if f in ("table_load", "list_grow")}
    return out, r

new, r = crashes("uninit")
if not r["junk"] or not all(g["policy"].startswith("junk=64K;") for g in r["findings"]):
    bad.append(f"uninit: the runs' policy has no junk=64K: {[g['policy'] for g in r['findings']]}")
if new != {"table_load", "list_grow"}:
    bad.append(f"with the sweep's fill, crash findings in {sorted(new)}, not table_load and list_grow")
none, _ = crashes("uninit_none")
if none:
    bad.append(f"without any fill, crash findings in {sorted(none)}: the program does not need the fill")
je, _ = crashes("uninit_je")
if je != {"table_load", "list_grow"}:
    bad.append(f"with jemalloc's junk:true, crash findings in {sorted(je)}")
print(f"# uninitprog: crashes found in {sorted(new)} with junk=64K, {sorted(je)} with "
      f"jemalloc's junk:true, {sorted(none) or 'none'} without a fill")
if bad:
    sys.exit("FAIL: " + "\n".join(bad))
PY

# The same findings with either fill: uninitprog, the example, jq.
same() { # TAG: $TMP/TAG.json and $TMP/TAG_je.json have the same (site, outcome) call paths
	/usr/bin/python3 - "$TMP/$1.json" "$TMP/$1_je.json" "$1" <<'PY' || fail "see above"
import json, sys
def paths(path):
    r = json.load(open(path))
    return r, sorted({(p["site"], f["outcome"]) for f in r["findings"] for p in f["call_paths"]})
a, ga = paths(sys.argv[1])
b, gb = paths(sys.argv[2])
print(f"# {sys.argv[3]}: {len(ga)} call paths to a finding with junk=64K, {len(gb)} with junk:true; "
      f"outcomes {a['outcomes']} and {b['outcomes']}")
if ga != gb:
    sys.exit(f"FAIL: {sys.argv[3]}: junk=64K found {sorted(set(ga) - set(gb))} that junk:true did "
             f"not, and missed {sorted(set(gb) - set(ga))}")
PY
}
same uninit
sweep example -- -- "$EXAMPLE" "$SRC/tests/example/inventory.txt"
sweep example_je MALLOC_CONF=junk:true -- --no-junk -- "$EXAMPLE" "$SRC/tests/example/inventory.txt"
same example
if [ -x /usr/bin/jq ]; then
	printf '{"a": [1, 2, {"b": "x"}], "c": "text"}\n' >"$TMP/in.json"
	sweep jq -- --max-runs 300 -- /usr/bin/jq .a "$TMP/in.json"
	sweep jq_je MALLOC_CONF=junk:true -- --no-junk --max-runs 300 -- /usr/bin/jq .a "$TMP/in.json"
	same jq
else
	note "jq is not installed: not compared"
fi
