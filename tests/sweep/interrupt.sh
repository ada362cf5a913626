#!/bin/bash
# A sweep stopped by SIGINT or SIGTERM once some runs finished keeps them:
# every requested report is written (--json with "interrupted": true and the
# runs not done, JUnit with an "interrupted" property, HTML), holding the
# finished runs only; the console says "interrupted after N of M runs"; it
# exits 130 (SIGINT) or 143 (SIGTERM) with no run left alive and no file
# left behind. So it does under timeout(1), which signals it twice at once.
# A second Ctrl-C a second later ends it at once, just as clean; sooner it
# is the same stop.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
export TMPDIR=$TMP/tmpdir
mkdir -p "$TMPDIR"
# A copy of the slow program, so that only this test's runs are counted.
PROG=$TMP/slowprog
cp "$BUILD/tests/sweep/outprog" "$PROG" || fail "cannot copy outprog"

/usr/bin/python3 - "$SWEEP" "$PROG" "$TMP" <<'PY' || fail "see above"
import json, os, re, signal, subprocess, sys, time
import xml.etree.ElementTree as ET
sweep, prog, tmp = sys.argv[1:4]
bad = []
env = dict(os.environ, GFP_SWEEP_PROGRESS_S="0.3")

def alive():
    """The slow program's processes (not this script, which names it too)."""
    return subprocess.run(["pgrep", "-f", "^" + re.escape(prog)], capture_output=True,
                          text=True).stdout.split()

def stop(sig, tag, after=4):
    """Sweeps 40 runs of 0.4 s at -j 2; once `after` runs are done (its
    progress lines say so), sends sig. Returns its exit status, the seconds
    it took to exit, its stdout and stderr."""
    args = [sweep, "--mode", "nth", "-j", "2", "--json", f"{tmp}/{tag}.json", "--junit",
            f"{tmp}/{tag}.xml", "--html", f"{tmp}/{tag}.html", "--", prog, "slow", "40"]
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=open(f"{tmp}/{tag}.out", "w"),
                         stderr=subprocess.PIPE, text=True, env=env)
    err, t0 = [], None
    for l in p.stderr:
        err.append(l)
        m = re.match(r"gfp-sweep: note: (\d+)/\d+ runs", l)
        if m and int(m[1]) >= after:
            p.send_signal(sig)
            t0 = time.monotonic()
            break
    err += p.stderr.readlines()
    p.wait()
    if t0 is None:
        sys.exit(f"FAIL: {tag}: no progress line said {after} runs were done: {err}")
    return p.returncode, time.monotonic() - t0, open(f"{tmp}/{tag}.out").read(), "".join(err)

for sig, want in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
    tag = sig.name
    st, took, out, err = stop(sig, tag)
    if st != want:
        bad.append(f"{tag}: exit status {st}, {want} expected; stderr {err[-300:]!r}")
        continue
    left = alive()
    if left:
        bad.append(f"{tag}: runs left alive: {left}")
        subprocess.run(["pkill", "-9", "-f", "^" + re.escape(prog)])
    if os.listdir(os.environ["TMPDIR"]):
        bad.append(f"{tag}: files left: {os.listdir(os.environ['TMPDIR'])}")
    run = json.load(open(f"{tmp}/{tag}.json"))
    res = run["results"]
    planned = int(re.search(r"; (\d+) runs \(nth mode", out)[1])
    m = re.search(r"^interrupted after (\d+) of (\d+) runs", out, re.M)
    if not (run["interrupted"] is True and run["runs"] == len(res) >= 4
            and run["runs_not_done"] == planned - len(res) > 0):
        bad.append(f"{tag}: JSON interrupted={run['interrupted']} runs={run['runs']} "
                   f"results={len(res)} runs_not_done={run['runs_not_done']}, {planned} planned")
    if not m or (int(m[1]), int(m[2])) != (len(res), planned):
        bad.append(f"{tag}: the console says {m and m[0]!r}, {len(res)} of {planned} finished")
    # Finished runs only: each ran its program to the end (0.4 s asleep
    # first), none was killed by the stop, and they are plan order's.
    if any(r["seconds"] < 0.39 or r["signal"] or r["outcome"] not in ("handled", "ok")
           for r in res):
        bad.append(f"{tag}: a result that did not finish: {res}")
    if [r["hit"] for r in res] != sorted(r["hit"] for r in res):
        bad.append(f"{tag}: results out of plan order")
    sum_out = sum(run["outcomes"].values())
    if sum_out != len(res):
        bad.append(f"{tag}: outcomes {run['outcomes']} for {len(res)} results")
    s = ET.parse(f"{tmp}/{tag}.xml").getroot().find("testsuite")
    props = {p.get("name"): p.get("value") for p in s.iter("property")}
    cases = s.findall("testcase")
    # a testcase per finding (none here) and one for the runs that finished
    ncases = len(run["findings"]) + 1
    rest = cases[-1].find("system-out") if cases else None
    counted = sum(int(n) for n in re.findall(r"^\w+ (\d+):", rest.text if rest is not None
                                              else "", re.M))
    if (props.get("interrupted"), props.get("runs_not_done"), len(cases), s.get("tests"),
            counted) != ("true", str(planned - len(res)), ncases, str(ncases), len(res)):
        bad.append(f"{tag}: JUnit properties {props}, {len(cases)} testcases, tests={s.get('tests')}, "
                   f"{counted} runs counted")
    html = open(f"{tmp}/{tag}.html", encoding="utf-8").read()
    if "</html>" not in html:
        bad.append(f"{tag}: the HTML report is not written")
    banner = re.search(r'<p class="banner" role="alert"><strong>Interrupted:</strong> the sweep '
                       r'was stopped after (\d+) of (\d+) runs\.', html)
    if not banner or (int(banner[1]), int(banner[2])) != (len(res), planned):
        bad.append(f"{tag}: the HTML banner says {banner and banner[0]!r}, "
                   f"{len(res)} of {planned} finished")
    print(f"# {tag}: exit {st} {took:.2f} s after it, {len(res)} of {planned} runs reported")

# timeout(1) sends its signal to the sweep, then to its process group: one
# stop, with its reports. It does so at its deadline, or, as here, when it
# is itself told to stop once a run is done (a deadline would have to guess
# when that is on a loaded machine).
p = subprocess.Popen(["timeout", "--preserve-status", "-s", "TERM", "600", sweep, "--mode", "nth",
                      "-j", "2", "--json", f"{tmp}/timeout.json", "--", prog, "slow", "40"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True, env=env)
for l in p.stderr:
    if re.match(r"gfp-sweep: note: [1-9]\d*/\d+ runs", l):
        p.send_signal(signal.SIGTERM)
        break
out, err = p.communicate()
run = json.load(open(f"{tmp}/timeout.json")) if os.path.getsize(f"{tmp}/timeout.json") else {}
if p.returncode != 143 or not run.get("interrupted") or not run.get("results") or alive():
    bad.append(f"timeout: exit {p.returncode}, JSON {str(run)[:200]}, alive {alive()}, "
               f"stderr {err[-200:]!r}")

# A second Ctrl-C: within a second of the first it is the same stop (as
# timeout(1) sends it, to the sweep and to its process group); later it
# ends the sweep at once, even while a report is being written. Here the
# first one leaves the sweep blocked writing its results and --json to
# its standard output, a pipe the test has filled and does not read until
# it wants to; nothing is left running or behind. The second comes right
# after the first, or 3 s after it: the sweep tells them apart by when it
# handles them, which a loaded machine may delay, so a same stop taken for
# a late one is tried again (twice at most).
def blocked(tag):
    r, w = os.pipe()
    p = subprocess.Popen([sweep, "--mode", "nth", "-j", "2", "--json", "/dev/stdout", "--", prog,
                          "slow", "40"], stdin=subprocess.DEVNULL, stdout=w,
                         stderr=subprocess.PIPE, text=True, env=env)
    for l in p.stderr:
        if re.match(r"gfp-sweep: note: [1-9]\d*/\d+ runs", l):
            break
    # filled through a description of its own: the sweep's stays blocking
    fill = os.open(f"/proc/self/fd/{w}", os.O_WRONLY | os.O_NONBLOCK)
    try:
        while True:
            os.write(fill, b"#" * 4096)
    except BlockingIOError:
        pass
    os.close(fill)
    os.close(w)
    p.send_signal(signal.SIGINT)
    return r, p

for attempt in range(3):
    r, p = blocked("same")
    p.send_signal(signal.SIGINT)  # right after the first
    time.sleep(0.3)
    if p.poll() is not None:
        os.close(r)
        p.stderr.read()
        print(f"# same: the second SIGINT ended the sweep ({p.returncode}): handled late?")
        continue
    with os.fdopen(r, "rb") as f:
        text = f.read().decode()
    p.wait(timeout=60)
    run = json.loads(text.rstrip("\n").rsplit("\n", 1)[-1])
    if p.returncode != 130 or not run["interrupted"] or not run["results"] or \
            "interrupted after" not in text:
        bad.append(f"same: exit {p.returncode}, JSON {str(run)[:200]}")
    break
else:
    bad.append("same: a second SIGINT right after the first ended the sweep, three times")

r, p = blocked("twice")
try:
    p.wait(timeout=0.3)
    bad.append(f"twice: the sweep ended ({p.returncode}) with no reader for its results")
except subprocess.TimeoutExpired:
    pass
time.sleep(3)
t0 = time.monotonic()
p.send_signal(signal.SIGINT)  # 3.3 s after the first
# It ends without a reader for its results, or never.
try:
    p.wait(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
os.close(r)
err = p.stderr.read()
if p.returncode != 130 or "stopped at once by a second signal" not in err:
    bad.append(f"twice: exit {p.returncode} {time.monotonic() - t0:.1f} s after the "
               f"second signal, stderr {err[-200:]!r}")
for _ in range(100):
    if not alive() and not os.listdir(os.environ["TMPDIR"]):
        break
    time.sleep(0.1)
if alive() or os.listdir(os.environ["TMPDIR"]):
    bad.append(f"same, twice: alive {alive()}, files {os.listdir(os.environ['TMPDIR'])}")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
