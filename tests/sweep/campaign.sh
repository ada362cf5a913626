#!/bin/bash
# gfp-sweep --campaign: four targets (the bundled example by argument and by
# stdin, a program whose plain run exits 1 with an environment, a slow one)
# swept into one JSON and one JUnit report, a section per target. A second
# campaign, stopped by SIGINT in its second target, exits 130 with the
# finished target done, the second interrupted and the rest not run; run
# again, it takes the finished runs from its state file (no failure point is
# run twice) and its results, parsed, equal the unbroken campaign's, as they
# do from a state whose finished targets have groups (a gfp-sweep before
# findings wrote it). A state
# written with other options is refused; a target that cannot be swept is an
# error of its own, the others still swept; one whose plain run crashes ends
# the campaign, which run again reports it as an error and goes on.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
INV=$BUILD/tests/example/inventory
INPUT=$SRC/tests/example/inventory.txt
OUTPROG=$BUILD/tests/sweep/outprog

cat >"$TMP/camp.jsonl" <<EOF
# the example, then the same by stdin
{"id":"inventory","argv":["$INV","$INPUT"]}
{"id":"inventory-stdin","argv":["$INV","/dev/stdin"],"stdin":"$INPUT"}

{"id":"status1","argv":["$OUTPROG","status1"],"status":1,"env":{"GFP_TEST_MARK":"a b"}}
{"id":"slow","argv":["$OUTPROG","slow","3"]}
EOF

/usr/bin/python3 - "$SWEEP" "$TMP" <<'PY' || fail "see above"
import json, os, re, signal, subprocess, sys, time
import xml.etree.ElementTree as ET
sweep, tmp = sys.argv[1:3]
camp = f"{tmp}/camp.jsonl"
bad = []

def campaign(tag, state, extra=()):
    return [sweep, "--timeout", "5", "-j", "2", "--campaign", camp, "--state", f"{tmp}/{tag}.state",
            "--json", f"{tmp}/{tag}.json", "--junit", f"{tmp}/{tag}.xml", *extra]

def results(path):
    """The campaign's JSON without what differs from one run to the next."""
    d = json.load(open(path))
    for t in d["targets"]:
        for r in t["results"]:
            del r["seconds"]
    return d

def cases(path):
    """Each testsuite's testcases: class, name, failure type and text, stderr."""
    out = {}
    for s in ET.parse(path).getroot().iter("testsuite"):
        out[s.get("name")] = sorted(
            (c.get("classname"), c.get("name"), *[(x.tag, x.get("type"), x.text)
             for x in c if x.tag in ("failure", "skipped", "error", "system-err")])
            for c in s.iter("testcase"))
    return out

# The unbroken campaign.
p = subprocess.run(campaign("a", "a", ("--html", f"{tmp}/a.html")), capture_output=True, text=True)
a = results(f"{tmp}/a.json")
# --html: an index page with a row per target, each linking its own page,
# which holds that target's findings.
index = open(f"{tmp}/a.html", encoding="utf-8").read()
rows = re.findall(r'<tr class="(\w+)"><td><a href="([^"]+)">([^<]+)</a></td><td>(\w+)</td>', index)
if [r[2] for r in rows] != [x["id"] for x in a["targets"]]:
    bad.append(f"html index rows {[r[2] for r in rows]}, targets {[x['id'] for x in a['targets']]}")
for cls, href, tid, state in rows:
    tj = next(x for x in a["targets"] if x["id"] == tid)
    page = open(f"{tmp}/{href}", encoding="utf-8").read()
    arts = re.findall(r'<article class="finding (\w+)" id="f\d+">', page)
    if arts != [g["outcome"] for g in tj["findings"]] or (cls == "bad") != bool(tj["findings"]):
        bad.append(f"html page of {tid}: findings {arts}, JSON "
                   f"{[g['outcome'] for g in tj['findings']]}")
states = {t["id"]: t["state"] for t in a["targets"]}
if p.returncode != 1 or states != dict.fromkeys(["inventory", "inventory-stdin", "status1",
                                                    "slow"], "done"):
    sys.exit(f"FAIL: the campaign exits {p.returncode}, states {states}: {p.stderr[-500:]}")
t = {x["id"]: x for x in a["targets"]}
inv = t["inventory"]
if not ({g["outcome"] for g in inv["findings"]} >= {"crash", "hang", "silent"}
        and inv["program"][1:] == [os.environ["SRC"] + "/tests/example/inventory.txt"]):
    bad.append(f"inventory's findings: {[g['outcome'] for g in inv['findings']]}")
# By stdin the example has the same bugs at the same sites.
key = lambda x: sorted((g["outcome"], g["key"], g["count"], g["paths"]) for g in x["findings"])
if key(t["inventory-stdin"]) != key(inv) or not t["inventory-stdin"]["stdin"].endswith(
        "inventory.txt"):
    bad.append(f"inventory by stdin: {key(t['inventory-stdin'])} != {key(inv)}")
st = t["status1"]
if st["expected_status"] != 1 or st["env"] != {"GFP_TEST_MARK": "a b"} or not st["findings"] \
        or "GFP_TEST_MARK='a b' " not in st["findings"][0]["reproducer"]:
    bad.append(f"status1: {st['expected_status']} {st['env']} {st['findings'][:1]}")
if sum(x["runs"] for x in a["targets"]) != a["runs"] or a["interrupted"] or \
        any(sum(x["outcomes"][o] for x in a["targets"]) != a["outcomes"][o] for o in a["outcomes"]):
    bad.append(f"campaign totals: runs {a['runs']} outcomes {a['outcomes']}")
junit_a = cases(f"{tmp}/a.xml")
if sorted(junit_a) != sorted(f"gfp-sweep {i}" for i in states) or \
        {c[0] for c in junit_a["gfp-sweep slow"]} != {"slow"}:
    bad.append(f"JUnit testsuites {sorted(junit_a)}")
print(f"# unbroken: {a['runs']} runs, {states}")

# Stopped in its second target: after 5 of its runs are in the state.
state = f"{tmp}/b.state"
b = subprocess.Popen(campaign("b", "b"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
t0 = time.monotonic()
while time.monotonic() - t0 < 60:
    if os.path.exists(state) and sum('"t":"inventory-stdin","run"' in l
                                     for l in open(state)) >= 5:
        break
    time.sleep(0.05)
b.send_signal(signal.SIGINT)
out, err = b.communicate()
b1 = results(f"{tmp}/b.json")
states = {x["id"]: x["state"] for x in b1["targets"]}
if b.returncode != 130 or not b1["interrupted"] or states != {
        "inventory": "done", "inventory-stdin": "interrupted", "status1": "not_run",
        "slow": "not_run"}:
    bad.append(f"stopped: exit {b.returncode}, interrupted {b1['interrupted']}, {states}, "
               f"{err[-300:]}")
part = next(x for x in b1["targets"] if x["id"] == "inventory-stdin")
if not (0 < part["runs"] < t["inventory-stdin"]["runs"] and part["interrupted"]):
    bad.append(f"the interrupted target has {part['runs']} runs")
before = [l for l in open(state) if '"run":' in l]

# Run again: it goes on, and ends as the unbroken one did.
p = subprocess.run(campaign("b", "b"), capture_output=True, text=True)
b2 = results(f"{tmp}/b.json")
if p.returncode != 1 or b2 != a:
    diff = [(x["id"], k) for x, y in zip(a["targets"], b2["targets"]) for k in x if x[k] != y.get(k)]
    bad.append(f"run again: exit {p.returncode}, results differ from the unbroken ones: {diff}")
if cases(f"{tmp}/b.xml") != junit_a:
    bad.append("run again: the JUnit testcases differ from the unbroken campaign's")
runs = [json.loads(l) for l in open(state) if '"run":' in l]
points = [(r["t"], r["site"], r["hit"]) for r in runs]
if len(points) != len(set(points)) or len(runs) != a["runs"] + 0 * len(before):
    bad.append(f"the state has {len(points)} runs, {len(set(points))} different, "
               f"{a['runs']} in the campaign")
m = re.search(r"(\d+) of (\d+) runs finished before", p.stderr)
if not m or int(m[1]) != part["runs"]:
    bad.append(f"run again: no note of the runs taken from the state: {p.stderr[-300:]}")

# A third time: everything from the state, nothing run (a run would have
# added its line to the state).
lines = open(state).read()
p = subprocess.run(campaign("b", "b"), capture_output=True, text=True)
if p.returncode != 1 or results(f"{tmp}/b.json") != a or open(state).read() != lines:
    bad.append(f"a finished campaign again: exit {p.returncode}, "
               f"{len(open(state).read()) - len(lines)} bytes more in the state")

# A state a gfp-sweep before findings wrote: its targets' "done" lines have
# groups ([first, count, rerun, confirmed]) and run_group. Its runs are
# grouped again into the same findings, each confirmed as the group that
# began with its first run was; nothing runs.
with open(f"{tmp}/old.state", "w") as f:
    for line in open(state):
        v = json.loads(line)
        if "done" in v:
            d = v["done"]
            v["done"] = {"planned": d["planned"], "groups": d["findings"],
                         "run_group": d["run_finding"]}
        f.write(json.dumps(v) + "\n")
lines = len(open(f"{tmp}/old.state").readlines())
p = subprocess.run(campaign("old", "old"), capture_output=True, text=True)
if p.returncode != 1 or results(f"{tmp}/old.json") != a or \
        len(open(f"{tmp}/old.state").readlines()) != lines:
    bad.append(f"a state with groups: exit {p.returncode}, the findings "
               f"{'equal' if results(f'{tmp}/old.json') == a else 'differ'}, "
               f"{len(open(f'{tmp}/old.state').readlines()) - lines} lines added")

# Other options than the state's: refused, the state kept.
size = os.path.getsize(state)
p = subprocess.run(campaign("b", "b", ["--mode", "nth"]), capture_output=True, text=True)
if p.returncode != 2 or "other options (mode was sites, is nth now)" not in p.stderr or \
        os.path.getsize(state) != size:
    bad.append(f"other options: exit {p.returncode}: {p.stderr[-300:]}")

# A target that cannot be swept, and one whose plain run exits otherwise
# than the campaign says: errors of their own, the third target swept.
with open(f"{tmp}/bad.jsonl", "w") as f:
    f.write(json.dumps({"id": "missing", "argv": [f"{tmp}/no-such-program"]}) + "\n")
    f.write(json.dumps({"id": "status", "argv": [os.environ["BUILD"] + "/tests/sweep/outprog",
                                                 "status1"]}) + "\n")
    f.write(json.dumps({"id": "slow", "argv": [os.environ["BUILD"] + "/tests/sweep/outprog",
                                               "slow", "1"]}) + "\n")
p = subprocess.run([sweep, "--timeout", "5", "--campaign", f"{tmp}/bad.jsonl", "--json", f"{tmp}/bad.json",
                    "--junit", f"{tmp}/bad.xml"], capture_output=True, text=True)
d = json.load(open(f"{tmp}/bad.json"))
got = {x["id"]: (x["state"], x.get("error", "")) for x in d["targets"]}
errs = {s.get("name"): s.get("errors") for s in ET.parse(f"{tmp}/bad.xml").getroot().iter("testsuite")}
if p.returncode != 2 or got["slow"][0] != "done" or got["missing"][0] != "error" or \
        got["missing"][1] != f"{tmp}/no-such-program: No such file or directory" or \
        got["status"] != ("error", "without injection it exits 1, the campaign expects 0") or \
        errs != {"gfp-sweep missing": "1", "gfp-sweep status": "1", "gfp-sweep slow": "0"}:
    bad.append(f"errors: exit {p.returncode}, {got}, JUnit errors {errs}")
if not os.path.exists(f"{tmp}/bad.jsonl.state"):
    bad.append("no state beside the campaign file by default")

# A target whose plain run crashes ends the sweep (as one sweep would end);
# run again, the campaign reports it as an error and sweeps the others.
with open(f"{tmp}/fatal.jsonl", "w") as f:
    f.write(json.dumps({"id": "crasher", "argv": ["sh", "-c", "kill -SEGV $$"]}) + "\n")
    f.write(json.dumps({"id": "slow", "argv": [os.environ["BUILD"] + "/tests/sweep/outprog",
                                               "slow", "1"]}) + "\n")
fatal = [sweep, "--timeout", "5", "--campaign", f"{tmp}/fatal.jsonl", "--json", f"{tmp}/fatal.json"]
p = subprocess.run(fatal, capture_output=True, text=True)
if p.returncode != 2 or "the recording run died by signal 11" not in p.stderr:
    bad.append(f"a crashing target: exit {p.returncode}: {p.stderr[-300:]}")
p = subprocess.run(fatal, capture_output=True, text=True)
d = json.load(open(f"{tmp}/fatal.json")) if os.path.getsize(f"{tmp}/fatal.json") else {}
got = {x["id"]: (x["state"], x.get("error", "")) for x in d.get("targets", [])}
if p.returncode != 2 or got.get("slow", ("",))[0] != "done" or \
        not got.get("crasher", ("", ""))[1].startswith("its recording run failed"):
    bad.append(f"a crashing target, run again: exit {p.returncode}, {got}, {p.stderr[-300:]}")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
