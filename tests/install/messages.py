#!/usr/bin/python3
"""Every tool: --version prints "TOOL (gfpshim) VERSION"; every error path
prints "TOOL: error: message" (warnings and notes alike) on stderr and
nothing else there, usage errors followed by "try 'TOOL --help'"."""
import os
import re
import sys
import tempfile

import tools

failures = []
failed = set()  # the invocations that did not behave


def check(what, cond, detail=""):
    if not cond:
        failures.append(f"{what}: {detail}")
        failed.add(what.split(":")[0])


version = tools.project_version()
for tool in tools.TOOLS:
    status, out, err = tools.run([tools.path(tool), "--version"])
    check(f"{tool} --version", (status, out, err) == (0, f"{tool} (gfpshim) {version}\n", ""),
          f"status {status}, stdout {out!r}, stderr {err!r}")

tmp = tempfile.mkdtemp()
noexec = os.path.join(tmp, "noexec")
with open(noexec, "w") as f:
    f.write("#!/bin/sh\nexit 0\n")
os.chmod(noexec, 0o644)
dead = os.path.join(tmp, "dead")  # a pid no process has: one that exited
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)

# (tool, args, status, usage error?)
USAGE, OTHER = True, False
cases = [
    ("gfp-run", ["--bogus"], 2, USAGE),
    ("gfp-run", ["-x"], 2, USAGE),
    ("gfp-run", ["--policy"], 2, USAGE),
    ("gfp-run", ["--help=3"], 2, USAGE),
    ("gfp-run", [], 2, USAGE),
    ("gfp-run", ["--lib", "/nonexistent/lib.so", "--", "true"], 2, OTHER),
    ("gfp-run", ["--policy", "stats=nope", "--", "true"], 125, OTHER),
    ("gfp-run", ["--policy", "limt=1M", "--", "true"], 125, OTHER),
    ("gfp-run", ["--rules", "sym:x =>", "--", "true"], 125, OTHER),
    ("gfp-run", ["--policy-file", "/nonexistent/p", "--", "true"], 125, OTHER),
    ("gfp-run", ["--", noexec], 126, OTHER),
    ("gfp-run", ["--", "/nonexistent/prog"], 127, OTHER),
    ("gfp-run", ["--", "no-such-program-anywhere"], 127, OTHER),
    ("gfp-sweep", ["--bogus"], 2, USAGE),
    ("gfp-sweep", ["-j"], 2, USAGE),
    ("gfp-sweep", [], 2, USAGE),
    ("gfp-sweep", ["-j", "0", "--", "true"], 2, OTHER),
    ("gfp-sweep", ["--mode", "every", "--", "true"], 2, OTHER),
    ("gfp-sweep", ["--policy", "fail.nth=3", "--", "true"], 2, OTHER),
    ("gfp-sweep", ["--policy", "limt=1M", "--", "true"], 125, OTHER),
    ("gfp-sweep", ["--", noexec], 126, OTHER),
    ("gfp-sweep", ["--", "/nonexistent/prog"], 127, OTHER),
    ("gfp-report", ["--bogus"], 2, USAGE),
    ("gfp-report", ["--top"], 2, USAGE),
    ("gfp-report", ["--top", "0", "x.json"], 2, USAGE),
    ("gfp-report", [], 2, USAGE),
    ("gfp-report", ["merge", "--bogus"], 2, USAGE),
    ("gfp-report", ["merge"], 2, USAGE),
    ("gfp-report", ["/nonexistent/r.json"], 2, OTHER),
    ("gfp-report", [noexec], 2, OTHER),
    ("gfp-ctl", ["--bogus"], 2, USAGE),
    ("gfp-ctl", [], 2, USAGE),
    ("gfp-ctl", ["1"], 2, USAGE),
    ("gfp-ctl", ["x1", "get"], 2, USAGE),
    ("gfp-ctl", ["1", "frob"], 2, USAGE),
    ("gfp-ctl", ["1", "get", "a", "b"], 2, USAGE),
    ("gfp-ctl", ["1", "report", "now"], 2, USAGE),
    ("gfp-ctl", ["1", "set", ""], 2, USAGE),
    ("gfp-ctl", [str(pid), "get"], 2, OTHER),
]
env = dict(os.environ, TMPDIR=tmp)
for tool, args, want, usage in cases:
    what = " ".join([tool] + [repr(a) if not a or " " in a else a for a in args])
    status, out, err = tools.run([tools.path(tool)] + args, env=env)
    check(what + ": status", status == want, f"{status}, not {want}; stderr {err!r}")
    check(what + ": stdout", out == "", f"{out!r}")
    lines = err.splitlines()
    hint = f"try '{tool} --help'"
    check(what + ": first line", lines and lines[0].startswith(f"{tool}: error: "),
          f"{err!r}")
    for line in lines[1:]:
        # The shim's own lines, quoted after the tool's error, keep theirs.
        ok = (re.match(rf"^({re.escape(tool)}|gfpshim): (error|warning|note): \S", line)
              or (usage and line == hint))
        check(what + ": line", ok, f"{line!r} in {err!r}")
    if usage:
        check(what + ": hint", lines and lines[-1] == hint, f"{err!r}")
    else:
        check(what + ": no hint", hint not in lines, f"{err!r}")

for f in failures:
    print("FAIL:", f)
total = len(cases) + len(tools.TOOLS)
print(f"{total - len(failed)} of {total} invocations as they should be")
sys.exit(1 if failures else 0)
