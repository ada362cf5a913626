#!/usr/bin/python3
"""CPython's own regression tests (Debian's libpython3.X-testsuite) that look
at descriptors, subprocesses and stderr, run by CPython's runner with two
worker processes (which reads each worker's output), without the shim and
under it: idle, limit=8G, stats=sites and fail.probability=0. Every test
must have the same outcome (passed, failed, error, skipped) as without the
shim, and the runner the same exit status. A test whose outcome differs is
run again, alone, with and without the shim, twice at most: some of these
tests time their subprocesses, and a loaded machine can fail one once
either way; a difference the shim makes comes back every time.

    python3_regrtest.py SHIM TMPDIR

The runs are bounded by one deadline; this process is a child subreaper, so
that whatever the runner and its workers leave behind (they start sessions
of their own) is found, killed with SIGKILL and reaped after each run.
"""
import ctypes
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

PYTHON = "/usr/bin/python3"
MODULES = ["test_subprocess", "test_atexit", "test_fcntl", "test_os", "test_popen",
           "test_posix", "test_pty"]
# The whole of the small modules; of test_subprocess, the tests of passed
# and closed descriptors and of stderr.
MATCH = [m for m in MODULES[1:]] + ["test_pass_fds*", "test_close_fds*", "*stderr*"]
MODES = [("idle", None), ("limit=8G", "limit=8G"), ("stats=sites", "stats=sites"),
         ("fail.probability=0", "fail.probability=0")]
DEADLINE_S = 600

shim, tmp = sys.argv[1:3]
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit(f"FAIL: prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def descendants():
    parent = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    me, found = os.getpid(), []
    for pid in parent:
        p = parent[pid]
        while p > 1 and p != me:
            p = parent.get(p, 0)
        if p == me:
            found.append(pid)
    return found


def kill_tree():
    while True:
        pids = descendants()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        if not pids:
            return
        time.sleep(0.05)


def outcomes(path):
    res = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        kinds = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
        res[case.get("name")] = kinds[0] if kinds else "passed"
    return res


env0 = {k: v for k, v in os.environ.items()
        if not k.startswith(("GFP_", "MALLOC_")) and k not in ("LD_PRELOAD", "GLIBC_TUNABLES")}
end = time.monotonic() + DEADLINE_S


def run(name, policy, tests=None):
    env = dict(env0)
    if name != "plain":
        env["LD_PRELOAD"] = shim
    if policy:
        env["GFP_POLICY"] = policy
    work = os.path.join(tmp, name)
    os.makedirs(work)
    env["TMPDIR"] = work
    xml = os.path.join(tmp, name + ".xml")
    out_path = os.path.join(tmp, name + ".out")
    if tests is None:
        cmd = [PYTHON, "-m", "test", "-j2", "--junit-xml", xml] + MODULES
        for m in MATCH:
            cmd += ["-m", m]
    else:  # these tests alone (ids: test.MODULE.CLASS.METHOD)
        cmd = [PYTHON, "-m", "test", "-j2", "--junit-xml", xml]
        cmd += sorted({t.split(".")[1] for t in tests})
        for t in tests:
            cmd += ["-m", t]
    with open(out_path, "wb") as out:
        p = subprocess.Popen(cmd, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = p.wait(timeout=max(1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            rc = "killed at the deadline"
        finally:
            kill_tree()
    res = outcomes(xml) if os.path.exists(xml) else {}
    with open(out_path, errors="replace") as f:
        tail = f.read()[-3000:]
    return rc, res, tail


rc0, base, tail0 = run("plain", None)
if rc0 == "killed at the deadline" or len(base) < 300:
    sys.exit(f"FAIL: the run without the shim: status {rc0}, {len(base)} tests\n{tail0}")
counts = {k: sum(1 for v in base.values() if v == k) for k in sorted(set(base.values()))}
print(f"# without the shim: status {rc0}, {len(base)} tests {counts}")
bad = []
for name, policy in MODES:
    rc, res, tail = run(name, policy)
    diff = sorted(t for t in set(base) | set(res) if base.get(t) != res.get(t))
    c = {k: sum(1 for v in res.values() if v == k) for k in sorted(set(res.values()))}
    print(f"# {name}: status {rc}, {len(res)} tests {c}, {len(diff)} differ")
    for again in (1, 2):
        if not diff or len(diff) > 20 or not all(t.startswith("test.") for t in diff):
            break
        _, plain, _ = run(f"plain-again{again}-{name}", None, diff)
        _, shimmed, _ = run(f"{name}-again{again}", policy, diff)
        same = [t for t in diff if t in plain and plain.get(t) == shimmed.get(t)]
        print(f"# {name}: run again alone, {len(same)} of {len(diff)} agree: {same[:5]}")
        diff = [t for t in diff if t not in same]
        if not diff:
            rc = rc0  # the whole run's status followed its differing tests
    if rc != rc0 or diff:
        lines = [f"  {t}: {res.get(t, 'not run')} (without the shim: {base.get(t, 'not run')})"
                 for t in diff[:15]]
        bad.append(f"{name}: status {rc} (without the shim {rc0}), {len(diff)} tests differ:\n"
                   + "\n".join(lines) + f"\n--- the runner's output (end):\n{tail}")
if bad:
    sys.exit("FAIL: " + "\n".join(bad))
