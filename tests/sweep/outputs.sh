#!/bin/bash
# gfp-sweep's files are never written through a symlink planted at their
# path, as root too: --json, --junit, --html, a campaign's index and target
# pages, gfp-report merge -o. Each report is a new file (mode 0600) renamed
# over the path once whole: the link is replaced, its target (one of root's,
# one of another user's, a dangling one) left exactly as it was. A campaign's
# --state, appended to, is refused when it is a symlink. A directory, a FIFO
# or a socket at any of those paths is refused at once with one line. A
# usage error or a refused policy leaves no report file behind, and a report
# that cannot be written whole (a file size limit) leaves the old one as it
# was and no temporary beside it. /dev/stdout and /dev/null still take a
# report, and /dev/stdout stays what it was. Not root, a path in a sticky
# directory that holds another user's file is refused before the runs.
# Sweeps run -j 2. Each gfp-sweep
# runs in a session of its own, killed whole if it outlives a deadline.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
REPORT=$BUILD/tools/gfp-report
OUTPROG=$BUILD/tests/sweep/outprog
export TMPDIR=$TMP/tmpdir
mkdir -p "$TMPDIR"

/usr/bin/python3 - "$SWEEP" "$REPORT" "$OUTPROG" "$TMP" <<'PY' || fail "see above"
import json, os, shutil, signal, socket, stat, sys, tempfile
import xml.etree.ElementTree as ET
sys.path.insert(0, os.environ["TESTS"] + "/sweep")
import bounded
sweep, report, outprog, tmp = sys.argv[1:5]
bad = []
DEADLINE = 120
root = os.geteuid() == 0

def run(args, tool=None, preexec=None, pre=()):
    """(exit status, stdout, stderr); None: killed, with all it started, at
    the deadline."""
    timeout = () if tool else ("--timeout", "60")
    return bounded.run([tool or sweep, *timeout, *pre, *args], DEADLINE, preexec_fn=preexec)

def victims(d):
    """Files a symlink may point to: root's, another user's, and none."""
    os.makedirs(d, exist_ok=True)
    v = {}
    for name, uid in (("root", 0), ("nobody", 65534)):
        path = f"{d}/victim.{name}"
        with open(path, "w") as f:
            f.write(f"the {name} victim\n")
        os.chmod(path, 0o644)
        if root:
            os.chown(path, uid, uid)
        v[path] = (f"the {name} victim\n", os.stat(path))
    return v

def untouched(tag, v):
    for path, (text, st) in v.items():
        now = os.stat(path)
        if open(path).read() != text or (now.st_mode, now.st_uid, now.st_size) != \
                (st.st_mode, st.st_uid, st.st_size):
            bad.append(f"{tag}: {path} was written through a symlink")
    dangling = f"{os.path.dirname(next(iter(v)))}/nothing-here"
    if os.path.lexists(dangling):
        bad.append(f"{tag}: a dangling symlink's target was made")

def plant(path, target):
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)

def report_file(tag, path, check):
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o600:
        bad.append(f"{tag}: {path} is mode {oct(st.st_mode)}, a regular file of 0600 expected")
        return
    try:
        check(path)
    except Exception as e:
        bad.append(f"{tag}: {path}: {e!r}")

def html(path):
    assert open(path, encoding="utf-8").read().rstrip().endswith("</html>")

def no_temporaries(tag, d):
    left = [n for n in os.listdir(d) if n.startswith(".gfp-")]
    if left:
        bad.append(f"{tag}: temporaries left in {d}: {left}")

def one_line(tag, status, err, want, words):
    err = err.decode(errors="replace")
    if status != want or len(err.splitlines()) != 1 or words not in err:
        bad.append(f"{tag}: exit {status} ({want} expected), stderr {err!r}")

# 1. A sweep's three reports, each path a symlink: to root's file, to
# another user's, to nothing.
d = f"{tmp}/sweep"
v = victims(d)
targets = list(v) + [f"{d}/nothing-here"]
paths = {"json": f"{d}/r.json", "junit": f"{d}/r.xml", "html": f"{d}/r.html"}
for i, (opt, path) in enumerate(paths.items()):
    plant(path, targets[i])
st, out, err = run(["-j", "2", "--json", paths["json"], "--junit", paths["junit"],
                    "--html", paths["html"], "--", outprog, "binary"])
if st != 1:
    bad.append(f"sweep: exit {st}: {err[-300:]!r}")
untouched("sweep", v)
report_file("sweep --json", paths["json"], lambda p: json.load(open(p))["results"])
report_file("sweep --junit", paths["junit"], ET.parse)
report_file("sweep --html", paths["html"], html)
no_temporaries("sweep", d)

# 2. A campaign: its --state a symlink is refused (nothing written, nothing
# run); its reports and each target's page, symlinks, are replaced.
d = f"{tmp}/camp"
v = victims(d)
camp = f"{d}/c.jsonl"
with open(camp, "w") as f:
    for tid in ("one", "two"):
        f.write(json.dumps({"id": tid, "argv": [outprog, "binary"]}) + "\n")
links = {"state": f"{d}/c.state", "json": f"{d}/c.json", "junit": f"{d}/c.xml",
         "html": f"{d}/c.html", "page1": f"{d}/c.1-one.html", "page2": f"{d}/c.2-two.html"}
for i, path in enumerate(links.values()):
    plant(path, targets[i % len(targets)])
args = ["-j", "2", "--campaign", camp, "--state", links["state"], "--json", links["json"],
        "--junit", links["junit"], "--html", links["html"]]
st, out, err = run(args)
one_line("campaign --state symlink", st, err, 2, "is a symbolic link, not followed")
untouched("campaign --state symlink", v)
if any(not os.path.islink(p) for p in links.values()):
    bad.append("campaign --state symlink: a report was written though the state was refused")
os.unlink(links["state"])
st, out, err = run(args)
if st != 1:
    bad.append(f"campaign: exit {st}: {err[-300:]!r}")
untouched("campaign", v)
report_file("campaign --state", links["state"], lambda p: open(p).readline())
report_file("campaign --json", links["json"], lambda p: json.load(open(p))["targets"])
report_file("campaign --junit", links["junit"], ET.parse)
for k in ("html", "page1", "page2"):
    report_file(f"campaign {k}", links[k], html)
no_temporaries("campaign", d)

# gfp-report merge -o through a symlink.
d = f"{tmp}/merge"
v = victims(d)
plant(f"{d}/m.json", list(v)[1])
st, out, err = run(["merge", "-o", f"{d}/m.json", paths["json"]], tool=report)
if st != 0:
    bad.append(f"merge: exit {st}: {err!r}")
untouched("merge -o", v)
report_file("merge -o", f"{d}/m.json", lambda p: json.load(open(p))["results"])
no_temporaries("merge", d)

# 3. A directory, a FIFO, a socket at a report's path: refused at once, one
# line, before any run; the thing at the path as it was.
d = f"{tmp}/special"
os.makedirs(f"{d}/dir")
os.mkfifo(f"{d}/fifo")
sock = socket.socket(socket.AF_UNIX)
sock.bind(f"{d}/sock")
for opt in ("--json", "--junit", "--html"):
    for kind in ("dir", "fifo", "sock"):
        st, out, err = run(["-j", "2", opt, f"{d}/{kind}", "--", outprog, "binary"])
        one_line(f"{opt} {kind}", st, err, 2, f"cannot write {d}/{kind}: it is a")
        if out:
            bad.append(f"{opt} {kind}: the sweep ran: {out[:200]!r}")
for kind in ("dir", "fifo"):
    st, out, err = run(["--campaign", camp, "--state", f"{d}/{kind}"])
    one_line(f"--state {kind}", st, err, 2, f"cannot write {d}/{kind}: it is a")
    st, out, err = run(["merge", "-o", f"{d}/{kind}", paths["json"]], tool=report)
    one_line(f"merge -o {kind}", st, err, 2, f"cannot write {d}/{kind}: it is a")
# a target's page
os.mkfifo(f"{d}/c.2-two.html")
st, out, err = run(["--campaign", camp, "--state", f"{d}/c.state", "--html", f"{d}/c.html"])
one_line("campaign page fifo", st, err, 2, f"cannot write {d}/c.2-two.html: it is a FIFO")
if os.listdir(f"{d}/dir") or not stat.S_ISFIFO(os.lstat(f"{d}/fifo").st_mode) or \
        os.path.exists(f"{d}/c.state"):
    bad.append(f"special: changed: {os.listdir(d)}")
no_temporaries("special", d)

# 4. Errors before the runs, and a refused policy, leave no report file.
d = f"{tmp}/usage"
os.makedirs(d)
outs = ["--json", f"{d}/u.json", "--junit", f"{d}/u.xml", "--html", f"{d}/u.html"]
with open(f"{d}/bad.jsonl", "w") as f:
    f.write('{"id":"x","argv":["true"],"colour":"red"}\n')
for tag, args, want in (
        ("refused policy", [*outs, "--policy", "no.such.key=1", "--", outprog, "binary"], 125),
        ("campaign error", [*outs, "--campaign", f"{d}/bad.jsonl", "--state", f"{d}/s"], 2),
        ("recording run dies", [*outs, "--", "/bin/sh", "-c", "kill -KILL $$"], 2)):
    st, out, err = run(["-j", "2", *args])
    left = os.listdir(d)
    if st != want or sorted(left) != ["bad.jsonl"]:
        bad.append(f"{tag}: exit {st} ({want} expected), files left {left}: {err[-200:]!r}")

# 5. A report that cannot be written whole (a file size limit, SIGXFSZ
# ignored so that write fails with EFBIG): the old report stays, no
# temporary is left.
d = f"{tmp}/full"
os.makedirs(d)
old = "<html>the old report</html>\n"
with open(f"{d}/r.html", "w") as f:
    f.write(old)
def limited():
    import resource
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))
st, out, err = run(["-j", "2", "--html", f"{d}/r.html", "--", outprog, "binary"],
                   preexec=limited)
one_line("file size limit", st, err, 2,
         f"cannot write {d}/r.html: File too large")
if open(f"{d}/r.html").read() != old:
    bad.append("file size limit: the old report was not kept")
no_temporaries("file size limit", d)

# 6. Descriptors and devices take a report as they are.
before = os.readlink("/dev/stdout") if os.path.islink("/dev/stdout") else None
st, out, err = run(["-j", "2", "--json", "/dev/stdout", "--html", "/dev/null", "--", outprog,
                    "binary"])
text = out.decode()
if st != 1 or "reproduce" not in text or not text.rstrip().endswith("}"):
    bad.append(f"--json /dev/stdout: exit {st}, stdout ends {text[-200:]!r}")
else:
    json.loads(text[text.rindex('\n{"gfp_sweep"') + 1:])
after = os.readlink("/dev/stdout") if os.path.islink("/dev/stdout") else None
if before != after:
    bad.append(f"/dev/stdout was {before}, is {after}")
if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
    bad.append("/dev/null is no longer a device")

# 7. Not root, in a sticky directory: another user's file or symlink at the
# path cannot be renamed over, and is refused before the runs, not after.
setpriv = shutil.which("setpriv")
if root and setpriv:
    sticky = tempfile.mkdtemp(dir=os.path.dirname(tmp))
    try:
        os.chmod(sticky, 0o1777)
        with open(f"{sticky}/r.json", "w") as f:
            f.write("root's\n")
        os.symlink(list(v)[0], f"{sticky}/l.json")
        for name in ("r.json", "l.json"):
            st, out, err = run(["-j", "2", "--json", f"{sticky}/{name}", "--", outprog, "binary"],
                               tool=setpriv, pre=["--reuid=65534", "--regid=65534",
                                                  "--clear-groups", "env", f"TMPDIR={sticky}",
                                                  sweep])
            one_line(f"sticky {name}", st, err, 2, "in a sticky directory, where it cannot be")
        if open(f"{sticky}/r.json").read() != "root's\n" or not os.path.islink(f"{sticky}/l.json"):
            bad.append("sticky: changed")
    finally:
        shutil.rmtree(sticky)

if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
print("# no report written through a symlink or into a FIFO; none left by an error")
PY
