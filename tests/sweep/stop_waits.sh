#!/bin/bash
# The first SIGTERM (or SIGINT) ends gfp-sweep wherever it waits, with
# 128 + the signal, no process of its runs left and no file of its own left
# behind: reading its campaign from a pipe no one writes (--campaign -),
# the recording run, a run of the plan, a finding's confirmation run, and a
# campaign target's recording run. stopprog waits in each of those places
# with a child of its own in another session. --campaign FIFO is refused at
# once, with one line, and so are a directory and a device; a campaign read
# from a pipe sweeps as from a file. Every gfp-sweep here runs in a session
# of its own, killed whole (and its runs' processes by pid) if it outlives a
# generous deadline.
source "$TESTS/lib.sh"
need_prog pgrep
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/stopprog
OUTPROG=$BUILD/tests/sweep/outprog
export TMPDIR=$TMP/tmpdir
mkdir -p "$TMPDIR"

/usr/bin/python3 - "$SWEEP" "$PROG" "$OUTPROG" "$TMP" <<'PY' || fail "see above"
import json, os, random, re, shutil, signal, subprocess, sys, threading, time
sys.path.insert(0, os.environ["TESTS"] + "/sweep")
import bounded
sweep, prog, outprog, tmp = sys.argv[1:5]
bad = []
marker = f"gfpstop-{os.getpid()}-{random.randrange(1 << 30)}"
env = dict(os.environ, GFP_SWEEP_PROGRESS_S="0.2")
DEADLINE = 60
started = []

def leftovers():
    """The processes that carry this test's marker (the runs and their children)."""
    out = subprocess.run(["pgrep", "-f", "--", marker], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]

def kill_tree(p):
    """The sweep and all it started, then whatever of its runs is left (a
    daemon reparented away), by pid."""
    bounded.kill_tree(p)
    for pid in leftovers():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # what a killed sweep leaves is not for the next case to find
    shutil.rmtree(os.environ["TMPDIR"])
    os.mkdir(os.environ["TMPDIR"])

def start(args, stdin=subprocess.DEVNULL):
    """The sweep in a session of its own; its stderr read by a thread into
    p.err (lines), its stdout into a file."""
    out = open(f"{tmp}/sweep.{len(started)}.out", "w+")
    p = subprocess.Popen([sweep, *args], stdin=stdin, stdout=out, stderr=subprocess.PIPE,
                         text=True, env=env, start_new_session=True)
    p.out, p.err = out, []
    p.reader = threading.Thread(target=lambda: p.err.extend(p.stderr), daemon=True)
    p.reader.start()
    started.append(p)
    return p

def finish(p):
    """Its exit (within the deadline, else its tree killed), stdout, stderr."""
    try:
        p.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        kill_tree(p)
        return None, "".join(p.err)
    p.reader.join(DEADLINE)
    p.out.seek(0)
    return p.out.read(), "".join(p.err)

def wait_for(p, pattern, tag):
    """Until a line of the sweep's stderr matches: it waits there now."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if any(re.search(pattern, l) for l in list(p.err)):
            return True
        if p.poll() is not None and not p.reader.is_alive():
            break
        time.sleep(0.05)
    bad.append(f"{tag}: never said /{pattern}/ (exit {p.poll()}): {''.join(p.err)[-400:]!r}")
    kill_tree(p)
    return False

def stopped(p, tag, sig):
    """Sends sig; the sweep must exit 128 + sig within the deadline, its
    runs gone and its directory removed."""
    p.send_signal(sig)
    out, err = finish(p)
    if out is None:
        bad.append(f"{tag}: still running {DEADLINE} s after SIG{sig.name[3:]}")
        return None, err
    if p.returncode != 128 + sig:
        bad.append(f"{tag}: exit status {p.returncode}, {128 + sig} expected: {err[-300:]!r}")
    left = leftovers()
    if left:
        bad.append(f"{tag}: processes left behind: {left}")
        kill_tree(p)
    if os.listdir(os.environ["TMPDIR"]):
        bad.append(f"{tag}: files left in TMPDIR: {os.listdir(os.environ['TMPDIR'])}")
    return out, err

def flag_dir(tag):
    d = f"{tmp}/{tag}"
    os.makedirs(d, exist_ok=True)
    return d

# --campaign FIFO, a directory, a device: refused at once, one line each.
fifo = f"{tmp}/camp.fifo"
os.mkfifo(fifo)
for tag, path in (("fifo", fifo), ("directory", tmp), ("device", "/dev/null")):
    p = start(["--campaign", path, "--state", f"{tmp}/{tag}.state"])
    out, err = finish(p)
    if out is None:
        bad.append(f"--campaign {tag}: still waiting after {DEADLINE} s")
        continue
    lines = err.splitlines()
    if p.returncode != 2 or len(lines) != 1 or "give a regular file" not in err:
        bad.append(f"--campaign {tag}: exit {p.returncode}, stderr {err!r}")
    if os.path.exists(f"{tmp}/{tag}.state"):
        bad.append(f"--campaign {tag}: its state was made")

# --campaign - from a pipe that stays open and empty: it waits, and says so;
# SIGTERM ends it.
r, w = os.pipe()
p = start(["--campaign", "-", "--state", f"{tmp}/pipe.state"], stdin=r)
os.close(r)
if wait_for(p, r"reading the campaign from the standard input", "campaign pipe"):
    out, err = stopped(p, "campaign pipe", signal.SIGTERM)
    if "stopped by SIGTERM while reading the campaign" not in err:
        bad.append(f"campaign pipe: stderr {err[-300:]!r}")
    if os.path.exists(f"{tmp}/pipe.state"):
        bad.append("campaign pipe: a state was made before the campaign was read")
os.close(w)

# ... and a campaign written into that pipe later is swept as from a file.
r, w = os.pipe()
p = start(["--timeout", "60", "-j", "2", "--campaign", "-", "--state", f"{tmp}/piped.state", "--json",
           f"{tmp}/piped.json"], stdin=r)
os.close(r)
if wait_for(p, r"reading the campaign from the standard input", "campaign piped"):
    os.write(w, json.dumps({"id": "bin", "argv": [outprog, "binary"]}).encode() + b"\n")
    os.close(w)
    out, err = finish(p)
    if out is None:
        bad.append("campaign piped: did not finish")
    elif p.returncode != 1 or not os.path.exists(f"{tmp}/piped.json"):
        bad.append(f"campaign piped: exit {p.returncode}: {err[-300:]!r}")
    else:
        targets = json.load(open(f"{tmp}/piped.json"))["targets"]
        if [(t["id"], t["state"]) for t in targets] != [("bin", "done")] or \
                [g["outcome"] for g in targets[0]["findings"]] != ["silent"]:
            bad.append(f"campaign piped: {targets}")
else:
    os.close(w)

# The recording run, a run of the plan, a confirmation run: SIGTERM, and
# SIGINT once.
for tag, mode, pattern, sig in (
        ("recording run", "record", r"note: recording run", signal.SIGTERM),
        ("a run", "run", r"note: 0/\d+ runs", signal.SIGTERM),
        ("a run (SIGINT)", "run", r"note: 0/\d+ runs", signal.SIGINT),
        ("confirmation", "confirm", r"note: confirming finding 1 of 1", signal.SIGTERM)):
    d = flag_dir(tag.replace(" ", "_"))
    p = start(["-j", "2", "--no-startup", "--timeout", "300", "--json", f"{d}/r.json", "--",
               prog, mode, marker, d])
    if not wait_for(p, pattern, tag):
        continue
    if mode != "record":  # the wait is in a run of the program's: it is alive
        for _ in range(600):
            if len(leftovers()) >= 2:
                break
            time.sleep(0.1)
    out, err = stopped(p, tag, sig)
    if out is not None and not os.path.exists(f"{d}/r.json"):
        bad.append(f"{tag}: no report after the stop")

# A campaign's target in its recording run.
d = flag_dir("campaign_target")
camp = f"{d}/camp.jsonl"
with open(camp, "w") as f:
    f.write(json.dumps({"id": "waits", "argv": [prog, "record", marker, d]}) + "\n")
p = start(["-j", "2", "--campaign", camp])
if wait_for(p, r"note: target waits: recording run", "campaign target"):
    out, err = stopped(p, "campaign target", signal.SIGTERM)
    if out is not None and "stopped by SIGTERM" not in err:
        bad.append(f"campaign target: stderr {err[-300:]!r}")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
print("# every wait ended by the first signal, nothing left behind")
PY
