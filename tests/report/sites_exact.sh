#!/bin/bash
# stats=sites stays exact however a block is counted: sitesprog's threads
# allocate from nine sites every kind of size the shadow map tells apart
# (8 bytes and less, the small sizes, the page-sized classes up to 112 KiB,
# larger blocks counted apart), calloc, realloc chains and aligned blocks
# from three entry points in turn, a live set over many 2 MiB chunks,
# blocks freed by another thread; each site's calls, bytes, live calls and live bytes in
# the report are what the program made and holds (malloc_usable_size),
# under the profiled routes, the shim's own (ctl=1) and a tree's budget
# (limit.scope=tree), with 1 and 4 threads. stats=totals counts the same
# per entry point in its routes as on the shim's path, and so where it
# watches every answer (ulimit -v).
source "$TESTS/lib.sh"
PROG=$BUILD/tests/report/sitesprog

cat >"$TMP/check.py" <<'PY'
import json, sys
rep, out, what = json.load(open(sys.argv[1])), open(sys.argv[2]).read().split("\n"), sys.argv[3]
want = {}
for line in out:
    if line.strip():
        name, *nums = line.split()
        want[name] = tuple(int(x) for x in nums)
if len(want) != 9:
    sys.exit(f"FAIL: {what}: sitesprog printed {len(want)} sites")
bad = []
for name, exp in sorted(want.items()):
    rows = [r for r in rep.get("allocinfo", []) if r.get("symbol", "").startswith(name + "+")]
    if len(rows) != 1:
        bad.append(f"{name}: {len(rows)} rows")
        continue
    r = rows[0]
    got = (r["calls"], r["bytes"], r["live_calls"], r["live_bytes"])
    if got != exp:
        bad.append(f"{name}: (calls, bytes, live_calls, live_bytes) {got}, the program {exp}")
    if r["failures"] or r["peak_bytes"] < r["live_bytes"]:
        bad.append(f"{name}: failures {r['failures']}, peak {r['peak_bytes']} below live")
if bad:
    sys.exit(f"FAIL: {what}: " + "; ".join(bad))
PY

for threads in 1 4; do
	for policy in "stats=sites" "stats=sites;ctl=1" "stats=sites;limit=16G;limit.scope=tree"; do
		what="$policy, $threads threads"
		timeout -s KILL 120 env LD_PRELOAD="$SHIM" GFP_POLICY="$policy" GFP_REPORT="$TMP/rep.json" \
			"$PROG" "$threads" >"$TMP/out" 2>"$TMP/err" || fail "$what: exit $?: $(tail -3 "$TMP/err")"
		/usr/bin/python3 "$TMP/check.py" "$TMP/rep.json" "$TMP/out" "$what" || fail "see above"
		note "$what: every site exact"
	done
done

# totals: the same entries in the sized routes, the shim's, and the ones
# that watch every answer.
totals() {
	timeout -s KILL 120 env LD_PRELOAD="$SHIM" GFP_POLICY="stats=totals$2" GFP_REPORT="$TMP/$1.json" \
		"$PROG" 1 >/dev/null 2>"$TMP/err" || fail "stats=totals$2: exit $?: $(tail -3 "$TMP/err")"
}
totals counted ""
totals shim ";ctl=1"
(ulimit -v 16000000 && totals all "") || exit 1
/usr/bin/python3 - "$TMP/counted.json" "$TMP/shim.json" "$TMP/all.json" <<'PY' ||
import json, sys
a, b, c = (json.load(open(f))["entries"] for f in sys.argv[1:4])
bad = [f"{k}: sized {a.get(k)}, shim {b.get(k)}, watching all {c.get(k)}"
       for k in sorted(set(a) | set(b) | set(c)) if not a.get(k) == b.get(k) == c.get(k)]
if len(a) < 6 or a["malloc"]["calls"] < 1000:
    bad.append(f"too few entries counted: {a}")
sys.exit("FAIL: " + "; ".join(bad) if bad else 0)
PY
	fail "the counted routes count otherwise"
note "stats=totals: sized, shim and watching routes count the same"
