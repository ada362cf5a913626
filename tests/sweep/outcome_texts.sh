#!/bin/bash
# Each outcome's definition reads the same wherever it is given: the JSON's
# "definitions" are gfp-sweep --help's, the console's line for each class of
# finding, the HTML legend's, the JUnit failure text's and the passing
# testcase's, and doc/gfp-sweep.md's and gfp-sweep(1)'s word for word.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/findprog

"$SWEEP" --timeout 60 -j 2 --json "$TMP/m.json" --junit "$TMP/m.xml" --html "$TMP/m.html" -- "$PROG" message \
	>"$TMP/m.txt" 2>"$TMP/m.err"
st=$?
[ "$st" = 1 ] || { cat "$TMP/m.err" >&2; fail "exit status $st, 1 expected"; }
"$SWEEP" --help >"$TMP/help.txt" || fail "--help failed"

PYTHONPATH=$TESTS/sweep /usr/bin/python3 - "$TMP" "$SRC/doc/gfp-sweep.md" "$SRC/doc/gfp-sweep.1.in" <<'PY' ||
import html, json, re, sys
import xml.etree.ElementTree as ET
from html_driver import parse

tmp, page, man = sys.argv[1:4]
flat = lambda s: " ".join(s.split())
run = json.load(open(f"{tmp}/m.json", encoding="utf-8"))
defs = run.get("definitions") or {}
bad = []
if sorted(defs) != sorted(run["outcomes"]) or not all(defs.values()):
    sys.exit(f"FAIL: the JSON's definitions {defs} are not one per outcome {list(run['outcomes'])}")

# --help: "  NAME       TEXT" wrapped under itself.
helptext = open(f"{tmp}/help.txt").read().split("Outcomes of a run:\n", 1)[-1]
got = dict(re.findall(r"^  (\w+) +((?:.*\n?)(?:^ {13}.*\n?)*)", helptext, re.M))
if {k: flat(v) for k, v in got.items()} != defs:
    bad.append(f"--help says {got}")

# doc/gfp-sweep.md: "* `NAME`: TEXT"; the man page: ".B NAME" then TEXT.
text = flat(open(page, encoding="utf-8").read())
roff = open(man, encoding="utf-8").read()
roff = flat(re.sub(r"\\f[BIRP]|\\&|\\\(dq", "", roff).replace("\\-", "-"))
for o, d in defs.items():
    if f"* `{o}`: {d}" not in text:
        bad.append(f"doc/gfp-sweep.md does not define {o} as: {d}")
    if f".TP .B {o} {d}" not in roff:
        bad.append(f"gfp-sweep(1) does not define {o} as: {d}")

# The console: "  CLASS: TEXT" once for each class of finding it lists.
console = open(f"{tmp}/m.txt", encoding="utf-8").read()
classes = {f["outcome"] for f in run["findings"]}
for o in classes:
    if f"\n  {o}: {defs[o]}\n" not in console:
        bad.append(f"the console does not say what {o} means")

# HTML: the legend's <dt>NAME</dt><dd>TEXT</dd>.
dl = parse(open(f"{tmp}/m.html", encoding="utf-8").read()).one("dl", cls="defs")
pairs = dict(zip([x.text() for x in dl.all("dt")], [x.text() for x in dl.all("dd")]))
if pairs != defs:
    bad.append(f"the HTML legend says {pairs}")

# JUnit: each failure's text starts with its class's; the passing testcase
# counts and defines the rest.
s = ET.parse(f"{tmp}/m.xml").getroot().find("testsuite")
for c in s.findall("testcase"):
    f = c.find("failure")
    if f is not None and not f.text.startswith(f"{f.get('type')}: {defs[f.get('type')]}\n"):
        bad.append(f"the JUnit failure of {c.get('name')!r} starts {f.text[:120]!r}")
    out = c.find("system-out")
    if f is None and out is not None:
        for o, d in defs.items():
            if o not in ("silent", "crash", "hang") and f"{o} {run['outcomes'][o]}: {d}" not in out.text:
                bad.append(f"the passing testcase's output does not define {o}")
print(f"# {len(defs)} definitions in 7 places")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
	fail "see above"
