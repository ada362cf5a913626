#!/bin/bash
# The JUnit report as a CI reads it (junitparser, a real consumer): one
# testcase per finding, classname the program's name, named by the
# finding's title, with file (the source's full path) and line attributes of
# its state's program frame (a silent finding's: its first call path's
# caller) - checked against the --json of the same sweep, each frame
# symbolized here on its own with addr2line -, a failure whose message is
# the outcome, signal, call paths and runs and whose text holds the frames
# as the console prints them, the evidence of a silent run and every
# reproducer; and one passing testcase for the failure points without a
# finding.
source "$TESTS/lib.sh"
need_prog addr2line xmllint
/usr/bin/python3 -c 'import junitparser' 2>/dev/null ||
	skip "python3-junitparser is not installed (tools/setup --tests)"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/example/inventory

"$SWEEP" --timeout 5 -j 2 --json "$TMP/r.json" --junit "$TMP/r.xml" -- "$PROG" "$SRC/tests/example/inventory.txt" \
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
results, findings = run["results"], run["findings"]
console = open(f"{tmp}/r.txt", encoding="utf-8").read()
xml = JUnitXml.fromfile(f"{tmp}/r.xml")
suites = list(xml) if isinstance(xml, JUnitXml) else [xml]
bad = []
if len(suites) != 1:
    sys.exit(f"FAIL: {len(suites)} test suites")
cases = list(suites[0])
if len(cases) != len(findings) + 1 or not findings:
    sys.exit(f"FAIL: {len(cases)} testcases for {len(findings)} findings")

# Where CI shows each finding, symbolized here: addr2line on its state's
# first program frame (the pc, or one byte before a return address), a
# silent finding's first caller; innermost inlined function first.
def place(f):
    if f["outcome"] == "silent":
        c = f["call_paths"][0]["caller"]
        return int(c["offset"], 16) - 1
    for i, fr in enumerate(f["crash_frames"]):
        if fr["module"] == "inventory":
            return int(fr["offset"], 16) - (1 if i else 0)
offs = [place(f) for f in findings]
out = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", prog] + [hex(o) for o in offs],
                     capture_output=True, text=True, check=True).stdout
where, lines = {}, out.splitlines()
for i, l in enumerate(lines):
    if re.fullmatch(r"0x[0-9a-f]+", l):  # -a: the address, then function, file:line
        fl = re.match(r"(\S+):(\d+)", lines[i + 2])
        where[int(l, 16)] = (os.path.normpath(fl[1]), int(fl[2]))
prog_name = os.path.basename(run["program"][0])
plural = lambda n, w: f"{n} {w}{'' if n == 1 else 's'}"

for k, (case, f) in enumerate(zip(cases, findings)):
    what = f"finding {k + 1} ({f['title']})"
    file, line = where[offs[k]]
    got = (case.classname, case.name, case.file, case.line)
    if got != (prog_name, f["title"], file, line):
        bad.append(f"{what}: testcase {got}, expected {(prog_name, f['title'], file, line)}")
    fail = next((x for x in case.result if isinstance(x, Failure)), None)
    if fail is None:
        bad.append(f"{what}: no failure")
        continue
    msg, text = fail.message or "", fail.text or ""
    counts = f" in {plural(f['paths'], 'call path')}, {plural(f['count'], 'run')}"
    first = results[f["first_run"]]
    want_msg = {"crash": f"crash (signal {f['signal']}){counts}",
                "silent": f"silent (exit {first['status']}, output differs at offset "
                          f"{(f['evidence'] or {}).get('offset')}){counts}"}.get(f["outcome"])
    if fail.type != f["outcome"] or (want_msg and msg != want_msg) or \
            (f["outcome"] == "hang" and not re.fullmatch(r"hang \(killed after \d+ s\)" +
                                                         re.escape(counts), msg)):
        bad.append(f"{what}: failure type {fail.type!r} message {msg!r}")
    if f["evidence"]:
        ev = f["evidence"]
        if f"  - {ev['expected']}\n  + {ev['actual']}\n" not in text:
            bad.append(f"{what}: no evidence in the failure text")
    # Its first run's frames as the console printed them, its reproducer;
    # every frame of the JSON's backtraces in order; each call path's.
    block = re.search(r"^\[%d\] .*?\n(.*?)(?=^\[\d+\]|\Z)" % (k + 1), console, re.M | re.S)
    parts = block and re.search(r"  the failed allocation:\n(.*?)(?:  (?:the crash|where it "
                                r"waited when the timeout came):\n(.*?))?"
                                r"(?:  output differs.*?)?  reproduce \(", block[1], re.S)
    if not parts:
        bad.append(f"{what}: no block in the console")
        continue
    inj, crash = parts[1], parts[2] or ""
    if f"the failed allocation:\n{inj}" not in text or (crash and f":\n{crash}" not in text):
        bad.append(f"{what}: the failure text's frames are not the console's:\n{text}")
    sections = re.search(r"the failed allocation:\n(.*?)(?:(?:the crash|where it waited when "
                         r"the timeout came):\n(.*?))?(?:output differs .*?)?reproduce ", text,
                         re.S)
    mods = lambda s: re.findall(r"\(\S+\+0x[0-9a-f]+\)", s or "")
    objs = lambda frames: [f"({o['module']}+{o['offset']})" for o in frames]
    if not sections or (mods(sections[1]), mods(sections[2])) != \
            (objs(f["injection_frames"]), objs(f["crash_frames"])):
        bad.append(f"{what}: the failure text's frames are not the JSON's backtraces")
    if f"reproduce (confirmed): {f['reproducer']}\n" not in text:
        bad.append(f"{what}: the failure text has not the finding's reproducer")
    for p in f["call_paths"]:
        if f"  reproduce: {p['reproducer']}\n" not in text:
            bad.append(f"{what}: the failure text lacks call path {p['site']}'s reproducer")
rest = cases[-1]
if rest.name != "failure points without a finding" or \
        any(isinstance(x, (Failure, Skipped)) for x in rest.result) or \
        f"ok {run['outcomes']['ok']}: " not in (rest.system_out or ""):
    bad.append(f"the last testcase {rest.name!r}: {rest.result} {rest.system_out!r}")
print(f"# {len(cases)} testcases, {len(findings)} failures; "
      f"e.g. {cases[0].classname} / {cases[0].name} ({cases[0].file}:{cases[0].line})")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad[:20]))
PY
