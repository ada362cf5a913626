#!/bin/bash
# reserve.thread on a real program: python3 appends 4000-byte bytearrays to
# a list under limit=24M until MemoryError, catches it, drops the list and
# prints. The requests near the limit that would loop are served from the
# thread's 256K reserve (records name libpython's frames), python gets its
# MemoryError, does not crash, and the free tops the reserve up again.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"
need_prog python3

script='
blocks = []
try:
    while True:
        blocks.append(bytearray(4000))
except MemoryError:
    n = len(blocks)
    del blocks
    print("memoryerror_after=%d" % n)
'
RS_REPORT=1 rs_run py 'limit=24M;reserve.thread=256K;oom=fail;retries=2;wait=1ms' \
	GFP_RECORD="$TMP/py.rec" python3 -c "$script"
rs_load py
want py "python3 did not report its MemoryError after many blocks" "py_memoryerror_after > 1000"
/usr/bin/python3 - "$TMP/py.rec" "$TMP/py.json" <<'PY' || { rs_show py; fail "python3's reserve records or report (above)"; }
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))["reserve"]
res = [r for r in recs if r["event"] == "reserve"]
bad = []
if not res:
    bad.append("no reserve record")
if any(r["reserve"] != "thread" for r in res):
    bad.append("a draw not from the thread's reserve")
if res and not any(f.get("module", "").startswith("libpython") or "python" in f.get("module", "")
                   for f in res[0]["frames"]):
    bad.append(f"the first record's frames are not python's: {res[0]['frames']}")
drawn = sum(r["drawn"] for r in res)
if drawn < 256 * 1024 - 4096 or drawn > 256 * 1024:
    bad.append(f"python drew {drawn} bytes of its 256K reserve")
if rep["thread_draws"] != len(res) or rep["drawn"] != drawn:
    bad.append(f"report {rep} vs {len(res)} records drawing {drawn}")
if rep["reserved_now"] != 256 * 1024:
    bad.append(f"reserved_now {rep['reserved_now']}: the free after the MemoryError should top the reserve up to 256K")
for b in bad:
    print("mismatch:", b)
print(f"# python3: {len(res)} draws from its thread reserve, {drawn} bytes; report {rep}")
sys.exit(1 if bad else 0)
PY
note "python3 got MemoryError after $py_memoryerror_after bytearrays of 4000, exit status $RS_RC"
