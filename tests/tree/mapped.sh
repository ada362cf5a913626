#!/bin/bash
# limit=64M;limit.scope=tree over a script whose members map their memory
# themselves: python3 (pymalloc's arenas) holds some 40 MiB of small
# objects; meanwhile map_prog's pool maps 1 MiB at a time and is refused
# (ENOMEM) where the tree's budget ends, not its own 64 MiB; once python3
# has exited, a third member gets most of the 64 MiB. Then a member whose
# threads map and unmap while it forks: its report and each child's charge
# exactly what they hold (each child has a slot of its own).
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
need_prog /usr/bin/python3
MAPPROG=$BUILD/tests/preload/map_prog

mkfifo "$TMP/fifo"
cat >"$TMP/script.sh" <<'SH'
/usr/bin/python3 -c '
import sys
held = [(i, i + 1) for i in range(300000)]
print("holding", flush=True)
sys.stdin.readline()
' <"$1/fifo" >"$1/first.out" 2>"$1/first.err" &
exec 3>"$1/fifo"
until [ -s "$1/first.out" ]; do sleep 0.05; done
"$2" fill 1048576 167772160 >"$1/second.out" 2>"$1/second.err"
echo >&3
exec 3>&-
wait
"$2" fill 1048576 167772160 >"$1/third.out" 2>"$1/third.err"
SH
bounded 100 env GFP_POLICY='limit=64M;limit.scope=tree' LD_PRELOAD="$SHIM" \
	bash "$TMP/script.sh" "$TMP" "$MAPPROG" || fail "the script failed: $(cat "$TMP"/*.err)"
expect_eq "python3" holding "$(cat "$TMP/first.out")"
/usr/bin/python3 - "$TMP" <<'PY' || fail "the members' mappings did not share the budget (above)"
import json, os, sys
MiB = 1 << 20
second, third = (json.load(open(os.path.join(sys.argv[1], n + ".out"))) for n in ("second", "third"))
print(f"# while python3 holds: {second['total'] / MiB:.0f} MiB; after: {third['total'] / MiB:.0f} MiB")
assert second["errno"] == 12 and third["errno"] == 12, (second, third)
assert 4 * MiB <= second["total"] <= 32 * MiB, second
assert third["total"] >= 48 * MiB and third["total"] <= 64 * MiB, third
PY

# Threads and forks in a tree.
rm -f "$TMP"/r.*.json
bounded 100 env GFP_POLICY='limit=256M;limit.scope=tree' GFP_REPORT="$TMP/r.%p.json" \
	LD_PRELOAD="$SHIM" "$MAPPROG" pool 4 2000 3 >"$TMP/pool.out" 2>"$TMP/pool.err" ||
	fail "map_prog pool: $(cat "$TMP/pool.err")"
/usr/bin/python3 - "$TMP" <<'PY' || fail "the tree's pool (above)"
import glob, json, os, sys
tmp = sys.argv[1]
reports = {json.load(open(f))["pid"]: json.load(open(f)) for f in glob.glob(os.path.join(tmp, "r.*.json"))}
lines = [json.loads(l) for l in open(os.path.join(tmp, "pool.out"))]
kids = {l["pid"]: l for l in lines if l["event"] == "child"}
held = [l for l in lines if l["event"] == "held"][0]
assert len(kids) == 3 and len(reports) == 4, (lines, list(reports))
for pid, r in reports.items():
    want = kids[pid]["held"] if pid in kids else held["held"]
    assert r["mapped"]["live_bytes"] == want, (pid, r["mapped"], want)
print(f"# pool in a tree: {held['held']} bytes, children {[k['held'] for k in kids.values()]}")
PY
