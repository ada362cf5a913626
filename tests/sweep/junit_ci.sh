#!/bin/bash
# The JUnit report as a CI reads it (junitparser, a real consumer): one
# testcase per run, classname the program's name, named after the failed
# allocation's caller "function file:line (hit K)" with file (the source's
# full path) and line attributes - checked against the --json of the same sweep, each caller
# symbolized here on its own with addr2line -, and a failure per finding
# whose message is the outcome and signal and whose text holds the frames as
# the console prints them, the evidence of a silent run and the reproducer.
source "$TESTS/lib.sh"
need_prog addr2line xmllint
/usr/bin/python3 -c 'import junitparser' 2>/dev/null ||
	skip "python3-junitparser is not installed (tools/setup --tests)"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/example/inventory

"$SWEEP" -j 2 --json "$TMP/r.json" --junit "$TMP/r.xml" -- "$PROG" "$SRC/tests/example/inventory.txt" \
	</dev/null >"$TMP/r.txt" 2>"$TMP/r.err"
st=$?
[ "$st" = 1 ] || { cat "$TMP/r.err" >&2; fail "exit status $st, 1 expected"; }
xmllint --noout --schema "$TESTS/sweep/junit.xsd" "$TMP/r.xml" 2>"$TMP/xsd.txt" ||
	{ cat "$TMP/xsd.txt" >&2; fail "the JUnit report does not match the schema"; }

/usr/bin/python3 - "$TMP" "$PROG" <<'PY' || fail "see above"
import collections, json, os, re, subprocess, sys
from junitparser import Attr, IntAttr, JUnitXml, TestCase, Failure, Skipped
tmp, prog = sys.argv[1:3]
TestCase.file = Attr("file")  # junitparser's way to read more attributes
TestCase.line = IntAttr("line")
run = json.load(open(f"{tmp}/r.json", encoding="utf-8"))
results, groups = run["results"], run["groups"]
console = open(f"{tmp}/r.txt", encoding="utf-8").read()
xml = JUnitXml.fromfile(f"{tmp}/r.xml")
suites = list(xml) if isinstance(xml, JUnitXml) else [xml]
bad = []
if len(suites) != 1:
    sys.exit(f"FAIL: {len(suites)} test suites")
cases = list(suites[0])
if len(cases) != len(results) or not cases:
    sys.exit(f"FAIL: {len(cases)} testcases for {len(results)} runs")

# Each run's caller, symbolized here: addr2line, one byte before the return
# address as gfp-sweep looks it up, innermost inlined function first.
frame = re.compile(r"^(?:(\S+) )?\((\S+)\+(0x[0-9a-f]+)\)$")
callers = [frame.match(r["caller"]) if r["caller"] else None for r in results]
offs = sorted({int(m[3], 16) - 1 for m in callers if m and m[2] == "inventory"})
out = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", prog] + [hex(o) for o in offs],
                     capture_output=True, text=True, check=True).stdout
where, lines = {}, out.splitlines()
for i, l in enumerate(lines):
    if re.fullmatch(r"0x[0-9a-f]+", l):  # -a: the address, then function, file:line
        fl = re.match(r"(\S+):(\d+)", lines[i + 2])
        where[int(l, 16)] = (lines[i + 1], os.path.normpath(fl[1]), int(fl[2]))

def base(r, m):
    """(name without the point, file, line) the report must give run r."""
    if not m:
        return None, None, None
    if m[2] == "inventory":
        fn, file, line = where[int(m[3], 16) - 1]  # file: the full path, named by its base
        return f"{fn} {os.path.basename(file)}:{line}", file, line
    return (f"{m[1]} ({m[2]}+{m[3]})" if m[1] else f"{m[2]}+{m[3]}"), m[2], None

kind = lambda r: "hit" if r["site"] else "call"
bases = [base(r, m) for r, m in zip(results, callers)]
seen = collections.Counter(f"{b[0]} ({kind(r)} {r['hit']})" for b, r in zip(bases, results) if b[0])
first_of = {g["first_run"]: g for g in groups}
finding = lambda o: o in ("silent", "crash", "hang")
prog_name = os.path.basename(run["program"][0])

for i, (case, r, (name, file, line)) in enumerate(zip(cases, results, bases)):
    what = f"run {i} ({r['site']} {kind(r)} {r['hit']}, {r['outcome']})"
    if name is None:
        want = f"site {r['site']} (hit {r['hit']})" if r["site"] else f"call {r['hit']}"
    else:
        want = f"{name} ({kind(r)} {r['hit']})"
        if seen[want] > 1:
            want = f"{name} ({kind(r)} {r['hit']}, site {r['injected_site']})"
    got = (case.classname, case.name, case.file, case.line)
    if got != (prog_name, want, file, line):
        bad.append(f"{what}: testcase {got}, expected {(prog_name, want, file, line)}")
    results_of = [x for x in case.result if isinstance(x, (Failure, Skipped))]
    fail = next((x for x in results_of if isinstance(x, Failure)), None)
    if finding(r["outcome"]) != (fail is not None):
        bad.append(f"{what}: failure {fail}")
        continue
    if fail is None:
        continue
    msg, text = fail.message or "", fail.text or ""
    want_msg = {"crash": f"crash (signal {r['signal']})",
                "silent": f"silent (exit {r['status']}, output differs at offset "
                          f"{(r['evidence'] or {}).get('offset')})"}.get(r["outcome"])
    if fail.type != r["outcome"] or (want_msg and msg != want_msg) or \
            (r["outcome"] == "hang" and not re.fullmatch(r"hang \(killed after \d+ s\)", msg)):
        bad.append(f"{what}: failure type {fail.type!r} message {msg!r}")
    if r["evidence"]:
        ev = r["evidence"]
        if f"  - {ev['expected']}\n  + {ev['actual']}\n" not in text:
            bad.append(f"{what}: no evidence in the failure text")
    if i not in first_of:
        continue
    # A group's first run: its frames as the console printed them, and its
    # reproducer; every frame of the JSON's backtraces in order.
    g = first_of[i]
    block = re.search(r"^\[\d+\] \w+ .*?allocation failure at site %s, %s %d\n(.*?)(?=^\[\d+\]|\Z)"
                      % (r["injected_site"], kind(r), r["hit"]), console, re.M | re.S)
    parts = block and re.search(r"  the failed allocation:\n(.*?)(?:  the crash:\n(.*?))?"
                                r"(?:  output differs.*?)?  reproduce \(", block[1], re.S)
    if not parts:
        bad.append(f"{what}: no block in the console")
        continue
    inj, crash = parts[1], parts[2] or ""
    if f"the failed allocation:\n{inj}" not in text or (crash and f"the crash:\n{crash}" not in text):
        bad.append(f"{what}: the failure text's frames are not the console's:\n{text}")
    sections = re.search(r"the failed allocation:\n(.*?)(?:the crash:\n(.*?))?"
                         r"(?:output differs .*?)?reproduce: ", text, re.S)
    mods = lambda s: re.findall(r"\(\S+\+0x[0-9a-f]+\)", s or "")
    objs = lambda frames: [f"({o['module']}+{o['offset']})" for o in frames]
    if not sections or (mods(sections[1]), mods(sections[2])) != \
            (objs(g["injection_frames"]), objs(g["crash_frames"])):
        bad.append(f"{what}: the failure text's frames are not the JSON's backtraces")
    if f"reproduce: {g['reproducer']}\n" not in text:
        bad.append(f"{what}: the failure text has not the group's reproducer")
print(f"# {len(cases)} testcases, {sum(finding(r['outcome']) for r in results)} failures; "
      f"e.g. {cases[0].classname} / {cases[0].name} ({cases[0].file}:{cases[0].line})")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad[:20]))
PY
