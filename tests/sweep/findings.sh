#!/bin/bash
# One finding per bug, whatever allocation failed (tests/sweep/findprog.c):
# a NULL dereference that 50 failed allocations lead to is one finding with
# 50 call paths; an xmalloc whose failure handler crashes is one finding
# whatever called it; two libc crashes under one program frame are two,
# from two allocations as from one call instruction; a program that says
# "Memory allocation failed", exits 0 and drops a record is one "silent,
# with a message" finding that shows the message, whichever record it
# dropped; 20 allocations whose failure drops one header are one silent
# finding; allocations in 4 threads (-j 2) leading to one crash are one
# finding; 3 dropped jobs that main waits for are one hang, keyed by where
# main waits. The console, --json, --junit (valid by junit.xsd; a testcase
# per finding and one for the rest, failures = findings) and --html (a row
# and an article per finding, its call paths in it) agree; gfp-report
# prints the findings as the sweep did. Under a UTF-8 locale, a program
# that writes an escape sequence, a carriage return, a byte that is no UTF-8
# and a right-to-left override to stdout and stderr gets them quoted
# everywhere.
source "$TESTS/lib.sh"
need_prog xmllint
need_c_utf8
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/findprog

PYTHONPATH=$TESTS/sweep LC_ALL=C.UTF-8 /usr/bin/python3 - "$SWEEP" "$PROG" "$TMP" \
	"$BUILD/tools/gfp-report" "$TESTS/sweep/junit.xsd" <<'PY' || fail "see above"
import json, os, re, subprocess, sys
import xml.etree.ElementTree as ET
import bounded
from html_driver import parse

sweep, prog, tmp, report, xsd = sys.argv[1:6]
bad = []
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def run(mode, *opts):
    out = f"{tmp}/{mode}"
    st, so, se = bounded.run([sweep, "--timeout", "60", "-j", "2", *opts, "--json", f"{out}.json", "--junit",
                              f"{out}.xml", "--html", f"{out}.html", "--", prog, mode], 400)
    text = so.decode("utf-8", "strict")
    if st != 1:
        bad.append(f"{mode}: exit status {st}, 1 expected\n{se.decode(errors='replace')[-2000:]}")
    v = subprocess.run(["xmllint", "--noout", "--schema", xsd, f"{out}.xml"],
                       capture_output=True, text=True)
    if v.returncode:
        bad.append(f"{mode}: the JUnit report does not match junit.xsd: {v.stderr[-1000:]}")
    return (json.load(open(f"{out}.json", encoding="utf-8")), text,
            ET.parse(f"{out}.xml").getroot(), open(f"{out}.html", encoding="utf-8").read())


def agree(mode, r, text, xml, html):
    """Every report lists the same findings, in the same order."""
    fs = r.get("findings")
    if fs is None:
        bad.append(f"{mode}: the JSON has no findings")
        return []
    titles = [f["title"] for f in fs]
    summary = re.findall(r"^  \[(\d+)\] (.*) \((\d+) call paths?, (\d+) runs?\)$", text, re.M)
    if [(t, int(p), int(c)) for _, t, p, c in summary] != \
            [(f["title"], len(f["call_paths"]), f["count"]) for f in fs]:
        bad.append(f"{mode}: the console's lines {summary}, the JSON's {titles}")
    for k, f in enumerate(fs):
        ps = f["call_paths"]
        runs_of = [i for i, x in enumerate(r["results"]) if x["key"] == f["key"]]
        if f["paths"] != len(ps) or sum(p["count"] for p in ps) != f["count"] != len(runs_of) \
                or len({p["site"] for p in ps}) != len(ps) or f["first_run"] != runs_of[0]:
            bad.append(f"{mode}: finding {k + 1}'s call paths do not add up: {f['paths']} "
                       f"{[(p['site'], p['count']) for p in ps]}, {f['count']} runs, "
                       f"results {runs_of}")
        if not f["confirmed"]:
            bad.append(f"{mode}: finding {k + 1} not confirmed")
    s = xml.find("testsuite")
    cases = s.findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    if (int(s.get("failures")), int(s.get("tests")), len(cases)) != (len(fs), len(fs) + 1,
                                                                     len(fs) + 1) \
            or [c.get("name") for c in failed] != titles \
            or cases[-1].get("name") != "failure points without a finding":
        bad.append(f"{mode}: JUnit failures={s.get('failures')} tests={s.get('tests')}, "
                   f"{[c.get('name') for c in cases]}; the findings {titles}")
    for c, f in zip(failed, fs):
        if f"{len(f['call_paths'])} call path" not in c.find("failure").get("message"):
            bad.append(f"{mode}: JUnit message {c.find('failure').get('message')!r}")
    doc = parse(html)
    arts = list(doc.all("article", cls="finding"))
    rows = [tr for tr in doc.one("table", id="points").one("tbody").all("tr")
            if tr.attrs["data-o"] in ("crash", "hang", "silent")]
    if [a.attrs["id"] for a in arts] != [f"f{k + 1}" for k in range(len(fs))] or \
            [a.one("h3").text().split("] ", 1)[1] for a in arts] != titles or len(rows) != len(fs):
        bad.append(f"{mode}: the HTML has {len(arts)} findings {[a.one('h3').text() for a in arts]}"
                   f" and {len(rows)} finding rows, the JSON {titles}")
    for tr, a, f in zip(rows, arts, fs):
        n = len(f["call_paths"])
        if len(list(tr.all("li"))) != n or len(list(a.one("table", cls="paths").all("tr"))) != n + 1:
            bad.append(f"{mode}: the HTML row and article of {f['title']!r} do not list its "
                       f"{n} call paths")
    rep = subprocess.run([report, f"{tmp}/{mode}.json"], capture_output=True, text=True)
    if rep.returncode or re.findall(r"^  \[\d+\] .*$", rep.stdout, re.M) != \
            re.findall(r"^  \[\d+\] .*$", text, re.M):
        bad.append(f"{mode}: gfp-report prints other findings than the sweep:\n{rep.stdout[:1500]}")
    return fs


# A NULL dereference reached from 50 failed allocations.
r, text, xml, html = run("paths")
fs = agree("paths", r, text, xml, html)
if [(f["outcome"], f["state"][:1], len(f["call_paths"])) for f in fs] != [("crash", ["fill"], 50)]:
    bad.append(f"paths: {[(f['title'], len(f['call_paths'])) for f in fs]}, expected one crash "
               f"in fill with 50 call paths")
callers = {p["caller"]["function"] for f in fs for p in f["call_paths"] if p.get("caller")}
if len(callers) != 50:
    bad.append(f"paths: the call paths name {len(callers)} callers, not the 50 alloc_N")

# An xmalloc whose failure handler crashes, 20 callers.
r, text, xml, html = run("wrapper")
fs = agree("wrapper", r, text, xml, html)
if [(f["outcome"], len(f["call_paths"])) for f in fs] != [("crash", 20)] or \
        fs[0]["state"][0] != "out_of_memory" or any("user_" in n for n in fs[0]["state"]):
    bad.append(f"wrapper: {[(f['title'], len(f['call_paths'])) for f in fs]}, expected one "
               f"crash in out_of_memory, no caller in its state, 20 call paths")

# Two libc crashes under one program frame: two allocations of copy_name
# (strlen, memcpy); one allocation of lookup, one call instruction (strcmp,
# strcasecmp).
r, text, xml, html = run("libc")
fs = agree("libc", r, text, xml, html)
for fn in ("copy_name", "lookup"):
    mine = [f for f in fs if f["state"][-1:] == [fn]]
    tops = {f["state"][0] for f in mine}
    libc = all(f["crash_frames"][0]["module"].startswith("libc.so") for f in mine)
    if len(mine) != 2 or len(tops) != 2 or not libc:
        bad.append(f"libc: {fn}: {[f['title'] for f in mine]}: expected two findings, each a "
                   f"libc frame of its own over {fn}")
    if fn == "lookup" and len({p["site"] for f in mine for p in f["call_paths"]}) != 1:
        bad.append(f"libc: lookup's two findings come from other call paths: "
                   f"{[[p['site'] for p in f['call_paths']] for f in mine]}")

# "Memory allocation failed", exit 0, a record dropped: whichever record.
r, text, xml, html = run("message")
fs = agree("message", r, text, xml, html)
if [(f["outcome"], f["loss"] and f["loss"]["message"]) for f in fs] != \
        [("silent", "Memory allocation failed")] or "silent, with a message" not in fs[0]["title"] \
        or fs[0]["count"] != len([x for x in r["results"] if x["outcome"] == "silent"]) or \
        fs[0]["count"] < 2:
    bad.append(f"message: {[(f['title'], f['count'], f['loss']) for f in fs]}")
elif "  its message on stderr: Memory allocation failed\n" not in text or \
        "silent, with a message" not in xml.find("testsuite/testcase/failure").get("message") or \
        "Memory allocation failed" not in parse(html).one("article", cls="finding").text():
    bad.append("message: the console, JUnit or HTML do not show the message")

# 20 allocations whose failure drops one header.
r, text, xml, html = run("silent")
fs = agree("silent", r, text, xml, html)
if [(f["outcome"], len(f["call_paths"]), f["loss"]["shape"]) for f in fs] != \
        [("silent", 20, "lines lost")]:
    bad.append(f"silent: {[(f['title'], len(f['call_paths'])) for f in fs]}, expected one "
               f"loss with 20 call paths")

# Threads: 4 threads' allocations, one crash in main.
r, text, xml, html = run("threads")
fs = agree("threads", r, text, xml, html)
if [(f["outcome"], f["state"][:1], len(f["call_paths"])) for f in fs] != [("crash", ["fill"], 4)]:
    bad.append(f"threads: {[(f['title'], len(f['call_paths'])) for f in fs]}")

# A hang: 3 dropped jobs, main waits in wait_jobs each time.
r, text, xml, html = run("hang", "--timeout", "10")
fs = agree("hang", r, text, xml, html)
hangs = [f for f in fs if f["outcome"] == "hang"]
try:  # Yama's 2 and 3: only root, or no one, may read another process's stack
    scope = int(open("/proc/sys/kernel/yama/ptrace_scope").read())
    traceable = scope < 2 or (scope == 2 and os.geteuid() == 0)
except OSError:
    traceable = True
if not traceable:
    print("# hang: this system forbids ptrace: the hang's stack is not checked")
elif len(hangs) != 1 or "wait_jobs" not in hangs[0]["state"] or \
        len(hangs[0]["call_paths"]) < 3 or not hangs[0]["crash_frames"]:
    bad.append(f"hang: {[(f['title'], len(f['call_paths'])) for f in fs]}, expected one hang "
               f"waiting in wait_jobs from 3 call paths or more")

# Hostile bytes in the output and on stderr.
r, text, xml, html = run("hostile")
fs = agree("hostile", r, text, xml, html)
if CONTROL.search(text):
    bad.append(f"hostile: the console shows a raw control: {CONTROL.search(text)!r}")
msg = fs[0]["loss"]["message"] if fs and fs[0]["loss"] else ""
if not ("\\x1b[31m" in msg and "\\xff" in msg and "\\x0d" in msg and "\\u202e" in msg):
    bad.append(f"hostile: the message is not quoted: {msg!r}")
for name, doc in (("JUnit", open(f"{tmp}/hostile.xml", encoding="utf-8").read()), ("HTML", html)):
    if CONTROL.search(doc.replace("\n", "").replace("\t", "")):
        bad.append(f"hostile: the {name} report holds a raw control "
                   f"{CONTROL.search(doc.replace(chr(10), ''))!r}")
if msg and f"its message on stderr: {msg}" not in text:
    bad.append("hostile: the console does not show the quoted message")

print(f"# {len(bad)} problems")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
