#!/bin/bash
# A silent finding shows where the output left the recording run's: the byte
# offset, its line and column, both sizes and each side's line (UTF-8 kept,
# control bytes and backslashes quoted, a long line cut around the
# difference, a missing line shown as the end of output), the same in the
# console's finding block, in --json (findings and results) and in the JUnit
# failure text; and it is right: the finding's reproducer, run here, writes
# output that first differs from the plain run's at that offset.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/outprog

for mode in binary midline wide; do
	"$SWEEP" --timeout 60 -j 2 --json "$TMP/$mode.json" --junit "$TMP/$mode.xml" -- "$PROG" $mode \
		</dev/null >"$TMP/$mode.txt" 2>"$TMP/$mode.err"
	st=$?
	[ "$st" = 1 ] || { cat "$TMP/$mode.err" >&2; fail "$mode: exit status $st, 1 expected"; }
	"$PROG" $mode >"$TMP/$mode.plain" || fail "$mode: the plain run failed"
done

/usr/bin/python3 - "$TMP" "$GFP_RUN" <<'PY' || fail "see above"
import json, re, subprocess, sys
import xml.etree.ElementTree as ET
tmp, gfp_run = sys.argv[1:3]
bad = []
# What each mode's one silent finding must show (expected, actual lines).
want = {
    "binary": dict(offset=5, line=2, column=1, expected_bytes=13, actual_bytes=5,
                   expected="payload", actual="(end of output)"),
    "midline": dict(offset=26, line=2, column=16, expected_bytes=45, actual_bytes=38,
                    expected="name: caf\u00e9\\x09\\x01\\\\[payload]",
                    actual="name: caf\u00e9\\x09\\x01\\\\[]"),
}
for mode in ("binary", "midline", "wide"):
    run = json.load(open(f"{tmp}/{mode}.json", encoding="utf-8"))
    silent = [g for g in run["findings"] if g["outcome"] == "silent"]
    if len(silent) != 1:
        bad.append(f"{mode}: {len(silent)} silent findings, expected 1")
        continue
    g = silent[0]
    ev = g.get("evidence")
    if not isinstance(ev, dict):
        bad.append(f"{mode}: the silent finding has no evidence object: {g}")
        continue
    first = run["results"][g["first_run"]]
    if first.get("evidence") != ev:
        bad.append(f"{mode}: the finding's evidence {ev} is not its first run's {first.get('evidence')}")
    for r in run["results"]:
        if (r["outcome"] == "silent") != isinstance(r.get("evidence"), dict):
            bad.append(f"{mode}: result {r} (evidence only and always for silent runs)")
    if mode in want and ev != want[mode]:
        bad.append(f"{mode}: evidence {ev}\n    expected {want[mode]}")
    if mode == "wide":
        exp, act = ev["expected"], ev["actual"]
        if (ev["line"], ev["column"], ev["offset"]) != (2, 5016, 5026):
            bad.append(f"wide: at line {ev['line']} column {ev['column']} offset {ev['offset']}")
        if not (exp.startswith("...") and exp.endswith("\\x09\\x01\\\\[payload]")
                and act.startswith("...") and act.endswith("\\\\[]") and len(exp) < 100):
            bad.append(f"wide: the long line is not cut around the difference: {exp!r} {act!r}")

    # Independent check: the reproducer's output against the plain run's.
    plain = open(f"{tmp}/{mode}.plain", "rb").read()
    cmd = g["reproducer"].replace(" gfp-run ", f" {gfp_run} ", 1)
    got = subprocess.run(["bash", "-c", cmd], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
    at = next((i for i, (a, b) in enumerate(zip(plain, got)) if a != b), min(len(plain), len(got)))
    if (at, len(plain), len(got)) != (ev["offset"], ev["expected_bytes"], ev["actual_bytes"]):
        bad.append(f"{mode}: the reproducer's output differs at {at} ({len(plain)} vs "
                   f"{len(got)} bytes), the evidence says {ev}")
    if ev["line"] != plain[:at].count(b"\n") + 1 or ev["column"] != at - (plain.rfind(b"\n", 0, at) + 1) + 1:
        bad.append(f"{mode}: line/column {ev['line']}/{ev['column']} for offset {at}")

    # The console's finding block, parsed.
    text = open(f"{tmp}/{mode}.txt", encoding="utf-8").read()
    block = re.search(r"^\[\d+\] silent\b.*?(?=^\[\d+\]|\Z)", text, re.M | re.S)
    m = block and re.search(r"^  output differs at offset (\d+) \(line (\d+), column (\d+)\): "
                            r"expected (\d+) bytes, got (\d+)\n    - (.*)\n    \+ (.*)\n",
                            block.group(0), re.M)
    shown = m and dict(zip(("offset", "line", "column", "expected_bytes", "actual_bytes"),
                           map(int, m.groups()[:5])), expected=m.group(6), actual=m.group(7))
    if shown != ev:
        bad.append(f"{mode}: the console shows {shown}, the JSON {ev}")

    # The JUnit failure of that finding: the same three lines.
    s = ET.parse(f"{tmp}/{mode}.xml").getroot().find("testsuite")
    case = s.findall("testcase")[run["findings"].index(g)]
    f = case.find("failure")
    lines = (f"output differs at offset {ev['offset']} (line {ev['line']}, column {ev['column']}): "
             f"expected {ev['expected_bytes']} bytes, got {ev['actual_bytes']}\n"
             f"  - {ev['expected']}\n  + {ev['actual']}\n")
    if f is None or lines not in (f.text or ""):
        bad.append(f"{mode}: the JUnit failure text lacks\n{lines}got {f is not None and f.text!r}")
    elif not f.get("message", "").startswith(f"silent (exit 0, output differs at offset {ev['offset']})"):
        bad.append(f"{mode}: JUnit failure message {f.get('message')!r}")
    print(f"# {mode}: offset {ev['offset']}, line {ev['line']}, column {ev['column']}: "
          f"- {ev['expected'][:40]!r} + {ev['actual'][:40]!r}")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
