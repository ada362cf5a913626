#!/bin/bash
# Hostile mapping calls (map_prog hostile): misaligned and empty munmaps,
# munmaps of what was never mapped or is gone already, across charged and
# uncharged pages, holes twice; MAP_FIXED over charged pages with a
# writable, a MAP_NORESERVE and a shared mapping; a MAP_FIXED_NOREPLACE
# refused; mremap with MREMAP_FIXED|MREMAP_MAYMOVE onto a charged mapping,
# growth refused in place, a shrink, a move that grows; a reservation
# committed in part, then made read-only and writable again; a private file
# mapping; a page of break from __sbrk. The program checks each answer
# against the kernel's, and the report must charge exactly what it holds
# writable, and hold the uncommitted part of the reservation uncharged.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/map_prog
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY
pg=$(getconf PAGESIZE)

for policy in 'limit=64M;stats=sites' 'limit=64M;limit.scope=tree' 'stats=totals'; do
	bounded 60 env GFP_POLICY="$policy" GFP_REPORT="$TMP/r.json" LD_PRELOAD="$SHIM" \
		"$PROG" hostile >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "$policy: map_prog hostile exited $?"; }
	/usr/bin/python3 - "$TMP" "$pg" "$policy" <<'PY' || fail "$policy: the report (above)"
import json, os, sys
tmp, pg, policy = sys.argv[1], int(sys.argv[2]), sys.argv[3]
held = json.loads(open(os.path.join(tmp, "out")).read())["held"]
d = json.load(open(os.path.join(tmp, "r.json")))
m = d["mapped"]
assert held == 29 * pg, held
assert m["live_bytes"] == held, f"charged {m['live_bytes']}, the program holds {held}"
assert m["uncharged_bytes"] == 4 * pg, m
if "sites" in policy:
    rows = [r for r in d["allocinfo"] if r.get("mapped")]
    assert sum(r["live_bytes"] for r in rows) == held, rows
print(f"# {policy}: {m}")
PY
done
