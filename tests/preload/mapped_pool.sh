#!/bin/bash
# A program with its own pool of mappings (map_prog pool): eight threads map,
# unmap in parts, grow, shrink and move (mremap), map over their own pages
# (MAP_FIXED) and commit reservations (mprotect) at once, and the main
# thread forks meanwhile. At the end, with the threads joined, the report's
# mapped live bytes and mappings are exactly what the program holds; each
# forked child's report says what it inherited; under stats=sites the
# allocinfo rows marked mapped add up to the same bytes, all at map_prog's
# own call sites. With a budget and without one (statistics alone).
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/map_prog
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY

for policy in 'limit=1G;stats=sites' 'stats=sites'; do
	rm -f "$TMP"/r.*.json
	bounded 120 env GFP_POLICY="$policy" GFP_REPORT="$TMP/r.%p.json" LD_PRELOAD="$SHIM" \
		"$PROG" pool 8 3000 4 >"$TMP/out" 2>"$TMP/err" || {
		cat "$TMP/err" >&2
		fail "$policy: map_prog pool exited $?"
	}
	/usr/bin/python3 - "$TMP" "$policy" <<'PY' || fail "$policy: the reports (above)"
import glob, json, os, sys
tmp, policy = sys.argv[1], sys.argv[2]
lines = [json.loads(l) for l in open(os.path.join(tmp, "out"))]
reports = {}
for f in glob.glob(os.path.join(tmp, "r.*.json")):
    d = json.load(open(f))
    reports[d["pid"]] = d
children = [l for l in lines if l["event"] == "child"]
held = [l for l in lines if l["event"] == "held"]
assert len(held) == 1 and len(children) == 4, lines
main = [d for pid, d in reports.items() if pid not in {c["pid"] for c in children}]
assert len(main) == 1, f"{len(reports)} reports for {len(children)} children"
m = main[0]["mapped"]
assert m["live_bytes"] == held[0]["held"], f"live {m['live_bytes']} != held {held[0]['held']}"
assert m["live_mappings"] == held[0]["mappings"], (m, held)
assert m["uncharged_bytes"] == 0, m
assert m["peak_bytes"] >= m["live_bytes"] and m["failures"] == 0, m
if "limit" in policy:
    assert m["budget_live_bytes"] >= m["live_bytes"], m
for c in children:
    r = reports[c["pid"]]["mapped"]
    assert r["live_bytes"] == c["held"], f"child {c}: {r}"
    assert r["live_mappings"] == c["mappings"], f"child {c}: {r}"
rows = [r for r in main[0]["allocinfo"] if r.get("mapped")]
assert sum(r["live_bytes"] for r in rows) == held[0]["held"], rows
assert sum(r["live_calls"] for r in rows) == held[0]["mappings"], rows
assert rows and all(r["module"].endswith("map_prog") for r in rows), rows
e = main[0]["entries"]
for name in ("mmap", "munmap", "mremap", "mprotect"):
    assert e.get(name, {}).get("calls", 0) > 0, (name, e)
print(f"# {policy}: {held[0]['held']} bytes in {held[0]['mappings']} mappings, "
      f"{len(rows)} mapped rows, children {[c['held'] for c in children]}")
PY
done
