#!/bin/bash
# gfp-report prints names, flags, messages and output lines read from files
# anyone may have written. None of their control bytes reaches the terminal
# (an OSC retitle, a clear screen, a C1 CSI), each shows as \xNN, UTF-8
# text is kept (a finding's title, its message, its evidence, a report's
# memory events and mapped bytes); a silent
# finding's evidence prints as gfp-sweep's console
# prints it; a report read through a FIFO prints as from a file.
source "$TESTS/lib.sh"
export LANG=C.UTF-8 LC_ALL=C.UTF-8
REPORT=$BUILD/tools/gfp-report
PROG=$BUILD/tests/sweep/outprog

"$BUILD/tools/gfp-sweep" -j 2 --json "$TMP/m.json" -- "$PROG" midline </dev/null \
	>"$TMP/console.txt" 2>"$TMP/sweep.err"
[ "$?" = 1 ] || { cat "$TMP/sweep.err" >&2; fail "the sweep of outprog midline did not find its silent run"; }
LD_PRELOAD=$SHIM GFP_POLICY='fail.nth=1' GFP_RECORD=$TMP/r.rec "$BUILD/tests/preload/hello" \
	>/dev/null 2>&1
[ -s "$TMP/r.rec" ] || fail "no injection record"

# The same files with hostile text where names and output lines go.
/usr/bin/python3 - "$TMP" <<'PY' || fail "could not write the hostile files"
import json, sys
tmp = sys.argv[1]
evil = "caf\u00e9\u001b]0;owned\u0007\u001b[2J\u009b31m\u007fend"
rec = [json.loads(l) for l in open(f"{tmp}/r.rec")]
for r in rec:
    r["flags"] = evil
    r["entry"] = evil
with open(f"{tmp}/evil.rec", "w") as f:
    for r in rec:
        f.write(json.dumps(r) + "\n")
sw = json.load(open(f"{tmp}/m.json"))
for g in sw["findings"]:
    if g.get("evidence"):
        g["evidence"]["actual"] = evil
    g["title"] = evil
    if g.get("loss"):
        g["loss"]["message"] = evil
sw["outcomes"][evil] = 0
json.dump(sw, open(f"{tmp}/evil.json", "w"))
camp = {"gfp_sweep": sw["gfp_sweep"], "campaign": evil, "targets": [dict(sw, id=evil, state="error", error=evil)]}
json.dump(camp, open(f"{tmp}/camp.json", "w"))
# A GFP_REPORT whose memory events and mapped bytes carry hostile names.
rep = {"gfpshim": "0.1.0", "pid": 1, "policy": {"stats": "totals"}, "totals": {"calls": 1},
       "entries": {"malloc": {"calls": 1}}, "memory_events": {"max": 2, evil: 1},
       "tree_memory_events": {"max": 3, evil: evil}, "memory_high": {"sleeps": 1, evil: 2},
       "mapped": {"live_bytes": 4096, evil: evil}}
json.dump(rep, open(f"{tmp}/report.json", "w"))
PY

for f in evil.rec evil.json camp.json report.json; do
	"$REPORT" "$TMP/$f" >"$TMP/$f.out" 2>"$TMP/$f.err" || {
		cat "$TMP/$f.err" >&2
		fail "gfp-report $f failed"
	}
done

/usr/bin/python3 - "$TMP" <<'PY' || fail "see above"
import re, sys
tmp = sys.argv[1]
bad = []
shown = "caf\u00e9\\x1b]0;owned\\x07\\x1b[2J\\xc2\\x9b31m\\x7fend"
for f in ("evil.rec", "evil.json", "camp.json", "report.json"):
    raw = open(f"{tmp}/{f}.out", "rb").read()
    ctl = [b for b in raw if (b < 0x20 and b not in b"\n\t") or b == 0x7f]
    if ctl:
        bad.append(f"{f}: control bytes reach the output: {sorted(set(ctl))}")
    text = raw.decode("utf-8")  # kept UTF-8, so it decodes
    c1 = [c for c in text if 0x80 <= ord(c) <= 0x9f]
    if c1:
        bad.append(f"{f}: C1 controls reach the output: {c1}")
    if shown not in text:
        bad.append(f"{f}: the hostile text is not shown quoted as {shown!r}")
    if f in ("evil.json", "camp.json") and "- name: caf\u00e9\\x09\\x01\\\\[payload]" not in text:
        bad.append(f"{f}: the evidence's expected line is missing or changed")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# The evidence reads as the sweep's console printed it.
grep -A2 '^  output differs at offset' "$TMP/console.txt" >"$TMP/want"
"$REPORT" "$TMP/m.json" | grep -A2 '^  output differs at offset' >"$TMP/got"
[ -s "$TMP/want" ] || fail "the sweep's console printed no evidence"
cmp -s "$TMP/want" "$TMP/got" || {
	diff "$TMP/want" "$TMP/got" >&2
	fail "gfp-report's evidence differs from the console's"
}

# A FIFO (a pipe from another process) reads as the file does.
mkfifo "$TMP/fifo"
cat "$TMP/m.json" >"$TMP/fifo" &
"$REPORT" "$TMP/fifo" | sed "s|^$TMP/fifo:|F:|" >"$TMP/fifo.out"
wait
"$REPORT" "$TMP/m.json" | sed "s|^$TMP/m.json:|F:|" >"$TMP/file.out"
cmp -s "$TMP/fifo.out" "$TMP/file.out" || fail "a report read through a FIFO prints otherwise"
exit 0
