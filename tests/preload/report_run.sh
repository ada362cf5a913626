#!/bin/bash
# Many processes of one run, one GFP_REPORT path without %p: a shell
# wrapper (sh -c 'prog; prog fork 2 & prog; ...; wait'), forked children,
# two threads in each. The run's first process (the shell) writes the path,
# every other process PATH.PID beside it (mode 0600, JSON of its own pid and
# of the run), and the shell's exit says in one line on stderr which they
# are. Under GFP_REPORT and under gfp-run --report, in a directory with a
# space and UTF-8 in its name; one process finds a symlink planted at its
# PATH.PID (replaced, the file it points to untouched), one runs from
# another directory (its report still lands beside the others: a relative
# path is made absolute for the children). A process that ends after the
# shell (a job left running) says where the run's reports went, once.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/run_prog
[ -x "$PROG" ] || fail "not built: $PROG"

/usr/bin/python3 - "$SHIM" "$GFP_RUN" "$PROG" "$TMP" <<'PY' || fail "see above"
import json, os, re, signal, stat, subprocess, sys

shim, gfp_run, prog, tmp = sys.argv[1:5]
failures = []


def check(what, cond, detail=""):
    if not cond:
        failures.append(f"{what}: {detail}")
    return cond


def run(cmd, cwd, env):
    """cmd in a session of its own: stdout and stderr read to their end
    (every process of the run closed them); the session is killed with
    SIGKILL after 60 s, and in any case at the end."""
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        failures.append(f"{cmd}: still running after 60 s, killed")
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return p.pid, p.returncode, out.decode(), err.decode()


def reports(path, first):
    """PATH's report and every PATH.PID: {pid: report}; checks that each
    is a regular file of mode 0600 named after its writer, of first's run."""
    d, base = os.path.split(path)
    found = {}
    for name in os.listdir(d):
        m = re.fullmatch(re.escape(base) + r"(?:\.([0-9]+))?", name)
        if not m:
            continue
        f = os.path.join(d, name)
        st = os.lstat(f)
        if not check(f"{name}: a regular file", stat.S_ISREG(st.st_mode), oct(st.st_mode)):
            continue
        check(f"{name}: mode 0600", stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode))
        r = json.load(open(f))
        pid = int(m.group(1)) if m.group(1) else first
        check(f"{name}: written by pid {pid}", r["pid"] == pid, r["pid"])
        check(f"{name}: of the run of pid {first}", r.get("run", {}).get("pid") == first,
              r.get("run"))
        found[pid] = r
    return found


def expect_run(tag, path, first, rc, out, err, programs, late=False):
    check(f"{tag}: exit status", rc == 0, f"{rc}; stderr {err!r}")
    printed = [int(line.split()[1]) for line in out.splitlines()]
    check(f"{tag}: the programs' pids", len(set(printed)) == programs, out)
    found = reports(path, first)
    check(f"{tag}: the first process's report at the path", first in found, sorted(found))
    for pid in printed:
        if check(f"{tag}: a report of pid {pid}", pid in found, f"{sorted(found)}"):
            calls = found[pid]["entries"].get("malloc", {}).get("calls", 0)
            check(f"{tag}: pid {pid}: its threads' calls counted", calls >= 1000, calls)
    others = sorted(p for p in found if p != first)
    lines = err.splitlines()
    # Said once, on stderr, naming the path as it is and as many
    # processes as wrote PATH.PID; the lowest pids listed.
    q = re.escape(path)
    who = r"pid [0-9]+ \(run_prog\) ended after its run's first process: " if late else ""
    pat = (rf"gfpshim: info: GFP_REPORT: {who}([0-9]+) {'' if late else 'other '}process(es)? "
           rf"of this run wrote (its report|their reports) beside '{q}', as '{q}\.PID': "
           r"([0-9, ]+)(?: and ([0-9]+) more)?")
    said = [m for m in (re.fullmatch(pat, l) for l in lines) if m]
    if check(f"{tag}: one line names the others", len(said) == 1 and len(lines) == 1, lines):
        m = said[0]
        listed = [int(x) for x in m.group(4).split(", ")]
        check(f"{tag}: how many", int(m.group(1)) == len(others), f"{m.group(0)}; {others}")
        check(f"{tag}: which", listed == others[:8], f"{listed}, not {others[:8]}")
        check(f"{tag}: and more", int(m.group(5) or 0) == len(others) - len(listed), m.group(0))
    return found


# A directory with a space and UTF-8 in its name; the report path is given
# relative to it, and one process runs from another directory (its report
# must still land here). Another finds a symlink at its PATH.PID to a file of the test.
d = os.path.join(tmp, "runs dir é")
os.mkdir(d)
victim = os.path.join(tmp, "victim")
elsewhere = os.path.join(tmp, "elsewhere")
os.mkdir(elsewhere)
script = r'''
"$1"; "$1" fork 2 & "$1"
sh -c 'ln -s "$1" "$2.$$" && exec "$3"' sh "$3" "$2" "$1"
(cd "$4" && exec "$1" fork 1)
wait
'''
env = {k: v for k, v in os.environ.items() if not k.startswith("GFP_")}
env["GFP_POLICY"] = "stats=totals"
for tag in ("GFP_REPORT", "gfp-run --report"):
    open(victim, "w").write("victim\n")
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    rel = f"rép {tag.split()[0]}.json"
    path = os.path.join(d, rel)
    sh = ["sh", "-c", script, "sh", prog, rel, victim, elsewhere]
    if tag == "GFP_REPORT":
        first, rc, out, err = run(sh, d, dict(env, LD_PRELOAD=shim, GFP_REPORT=rel))
    else:
        first, rc, out, err = run([gfp_run, "--report", rel, "--"] + sh, d, env)
    found = expect_run(tag, path, first, rc, out, err, 8)
    check(f"{tag}: the file the symlink named", open(victim).read() == "victim\n",
          repr(open(victim).read()))
    check(f"{tag}: nothing written where a process changed directory",
          not os.listdir(elsewhere), os.listdir(elsewhere))

# A job left running: it ends after the shell, which found no other report
# then and said nothing; the job says it, once (not its forked child).
path = os.path.join(d, "late.json")
first, rc, out, err = run(["sh", "-c", '"$1" wait "$2" fork 1 & exit 0', "sh", prog, path],
                          d, dict(env, LD_PRELOAD=shim, GFP_REPORT=path))
expect_run("late", path, first, rc, out, err, 2, late=True)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
exit 0
