#!/bin/bash
# Debian's python3 filling about 200 MiB with small objects under
# limit=64M;oom=fail: with its own allocator (pymalloc, whose 1 MiB arenas
# come from mmap) it is held at the limit as with PYTHONMALLOC=malloc - a
# MemoryError, after about as many objects, and a peak resident size
# (VmHWM, read by the script itself) far below what it reaches unheld
# (some 470 MiB). oom=fail makes the outcome the same for both: an arena is
# a costly request that fails after one round, while malloc's small
# requests would loop to the OOM step and be killed by default. The report
# shows that most of what pymalloc held was mapped directly, and allocinfo
# names python3's arena call site as a mapped row.
source "$TESTS/lib.sh"
need_prog /usr/bin/python3
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY

# (The spare megabytes, given back first, let the handler itself run.)
cat >"$TMP/fill.py" <<'PY'
import json
spare = bytearray(4 << 20)
held = []
outcome = "all of it"
try:
    for i in range(200 * 2**20 // 64):
        held.append((i, i + 1))
except MemoryError:
    spare = None
    outcome = "MemoryError"
n = len(held)
held = None
status = dict(l.split(":", 1) for l in open("/proc/self/status"))
kib = lambda k: int(status[k].split()[0])
print(json.dumps({"outcome": outcome, "objects": n, "hwm": kib("VmHWM") * 1024}))
PY

for alloc in pymalloc malloc; do
	rc=0
	bounded 120 env PYTHONMALLOC=$alloc GFP_POLICY='limit=64M;oom=fail;stats=sites' \
		GFP_LOG="$TMP/$alloc.log" GFP_RECORD="$TMP/$alloc.rec" GFP_REPORT="$TMP/$alloc.json" \
		LD_PRELOAD="$SHIM" /usr/bin/python3 "$TMP/fill.py" >"$TMP/$alloc.out" 2>"$TMP/$alloc.err" || rc=$?
	[ "$rc" = 0 ] || { cat "$TMP/$alloc.err" "$TMP/$alloc.log" >&2; fail "$alloc: status $rc"; }
done
/usr/bin/python3 - "$TMP" <<'PY' || fail "python3 was not held at the limit the same way (above)"
import json, os, sys
tmp = sys.argv[1]
MiB = 1 << 20
out = {a: json.load(open(os.path.join(tmp, a + ".out"))) for a in ("pymalloc", "malloc")}
for a, o in out.items():
    print(f"# {a}: {o['outcome']} after {o['objects']} objects, VmHWM {o['hwm'] / MiB:.0f} MiB")
    assert o["outcome"] == "MemoryError", (a, o)
    assert o["hwm"] <= 160 * MiB, f"{a}: resident {o['hwm'] / MiB:.0f} MiB under limit=64M"
ratio = out["pymalloc"]["objects"] / out["malloc"]["objects"]
assert 0.75 <= ratio <= 1.33, f"pymalloc held {ratio:.2f} times as many objects as malloc"
# pymalloc's arenas were mapped: most of its peak, at its arena call site.
rep = json.load(open(os.path.join(tmp, "pymalloc.json")))
m = rep["mapped"]
assert m["peak_bytes"] >= 32 * MiB and m["failures"] >= 1, m
rows = [r for r in rep["allocinfo"] if r.get("mapped")]
assert rows and max(r["peak_bytes"] for r in rows) >= 32 * MiB, rows
assert all(r["module"].startswith("python3") for r in rows), rows
recs = [json.loads(l) for l in open(os.path.join(tmp, "pymalloc.rec"))]
assert any(r["event"] == "failure" and r["entry"] == "mmap" and r["size"] == MiB for r in recs), recs
# With malloc, python3 maps nothing itself.
assert json.load(open(os.path.join(tmp, "malloc.json")))["mapped"]["peak_bytes"] < 4 * MiB
print(f"# pymalloc: mapped peak {m['peak_bytes'] / MiB:.0f} MiB at {len(rows)} call site(s)")
PY
