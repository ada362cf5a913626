#!/usr/bin/python3
"""Every exit status a tool's --help lists under "Exit status" comes from a
real invocation of it, and every status these invocations give is listed:
the tool's word for its statuses is what it does."""
import os
import signal
import subprocess
import sys
import tempfile
import time

import tools

SHIM = os.environ["SHIM"]
tmp = tempfile.mkdtemp()
env = dict(os.environ, TMPDIR=tmp)
failures = []


def status_of(argv, **kw):
    return tools.run(argv, env=kw.pop("env", env), **kw)[0]


def tool(name, *args):
    return status_of([tools.path(name)] + list(args))


def stopped_sweep(sig):
    """gfp-sweep stopped by sig while a run of sleep is in flight."""
    p = subprocess.Popen([tools.path("gfp-sweep"), "--", "sleep", "60"], env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(1)
    p.send_signal(sig)
    return p.wait(timeout=30)


noexec = os.path.join(tmp, "noexec")
with open(noexec, "w") as f:
    f.write("#!/bin/sh\nexit 0\n")
os.chmod(noexec, 0o644)
report = os.path.join(tmp, "report.json")
subprocess.run([tools.path("gfp-run"), "--policy", "stats=totals", "--report", report,
                "--", "true"], check=True)
outprog = os.path.join(tools.BUILD, "tests", "sweep", "outprog")

# A process that listens for gfp-ctl (ctl=1); gfp-ctl exits 2 until it does.
server = subprocess.Popen(["sleep", "60"], env=dict(env, LD_PRELOAD=SHIM, GFP_POLICY="ctl=1"))
ctl_pid = str(server.pid)
deadline = time.time() + 10
while tool("gfp-ctl", ctl_pid, "get", "ctl") == 2 and time.time() < deadline:
    time.sleep(0.05)

# tool: {status: how to get it}
cases = {
    "gfp-run": {
        2: lambda: tool("gfp-run", "--bogus"),
        125: lambda: tool("gfp-run", "--policy", "limt=1M", "--", "true"),
        126: lambda: tool("gfp-run", "--", noexec),
        127: lambda: tool("gfp-run", "--", "/nonexistent/prog"),
    },
    "gfp-sweep": {
        0: lambda: tool("gfp-sweep", "--", "true"),
        1: lambda: tool("gfp-sweep", "--", outprog, "binary"),
        2: lambda: tool("gfp-sweep", "--bogus"),
        125: lambda: tool("gfp-sweep", "--policy", "limt=1M", "--", "true"),
        126: lambda: tool("gfp-sweep", "--", noexec),
        127: lambda: tool("gfp-sweep", "--", "/nonexistent/prog"),
        129: lambda: stopped_sweep(signal.SIGHUP),
        130: lambda: stopped_sweep(signal.SIGINT),
        143: lambda: stopped_sweep(signal.SIGTERM),
    },
    "gfp-report": {
        0: lambda: tool("gfp-report", report),
        2: lambda: tool("gfp-report", "--bogus"),
    },
    "gfp-ctl": {
        0: lambda: tool("gfp-ctl", ctl_pid, "get", "limit"),
        1: lambda: tool("gfp-ctl", ctl_pid, "get", "fail.sed"),
        2: lambda: tool("gfp-ctl", "--bogus"),
        125: lambda: tool("gfp-ctl", ctl_pid, "set", "limit=banana"),
    },
}

try:
    for name, how in cases.items():
        listed = tools.exit_statuses(tools.help_text(name))
        for status in sorted(set(listed) | set(how)):
            if status not in how:
                failures.append(f"{name}: --help lists {status} ({listed[status]}), "
                                "no invocation here gives it")
                continue
            if status not in listed:
                failures.append(f"{name}: exits {status}, which --help does not list")
            got = how[status]()
            if got != status:
                failures.append(f"{name}: the invocation for {status} "
                                f"({listed.get(status)}) exited {got}")
        print(f"{name}: {sorted(listed)}")
    # gfp-run's other statuses are PROG's own.
    got = status_of([tools.path("gfp-run"), "--", "sh", "-c", "exit 7"])
    if got != 7:
        failures.append(f"gfp-run -- sh -c 'exit 7' exited {got}, not PROG's 7")
finally:
    server.kill()
    server.wait()

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
