#!/usr/bin/python3
"""meson install puts the bash completion in bash-completion's completions
directory under each tool's name; sourced by any of them it completes all
four: options (each one the tool knows), policy keys and their values (read
here from src/policy/keys.def), flag names (src/policy/flags.c), GFP_RULES matchers,
gfp-sweep's modes and gfp-ctl's listening processes. Its functions are
driven with COMP_WORDS/COMP_CWORD/COMP_LINE as bash sets them (split at '='
outside quotes), and three lines are completed by a real interactive bash
in a pty."""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

import tools

failures = []


def check(what, cond, detail=""):
    if not cond:
        failures.append(f"{what}: {detail}")


destdir = tempfile.mkdtemp()
prefix = tools.install(destdir)
files = {os.path.basename(d): destdir + d for d in tools.installed()
         if "/bash-completion/completions/" in d}
check("completion files", sorted(files) == sorted(tools.TOOLS), f"{sorted(files)}")
main = files.get("gfp-run", "")
for tool, f in files.items():
    check(f"{tool}: the same file", os.path.realpath(f) == os.path.realpath(main),
          f"{f} -> {os.path.realpath(f)}")
    # bash-completion sources the file named after the command it completes.
    out = subprocess.run(["bash", "--norc", "-c", f"source {shlex.quote(f)} && complete -p"],
                         capture_output=True, text=True).stdout
    got = set(re.findall(r"^complete -F \S+ (\S+)$", out, re.M))
    check(f"sourced as {tool}", got == set(tools.TOOLS), f"{out!r}")

rows = tools.keys_def()
keys = [r["name"] for r in rows]
flags = tools.flag_names()
xdg = tempfile.mkdtemp()
os.chmod(xdg, 0o700)
# A process gfp-ctl can reach: its socket is in $XDG_RUNTIME_DIR/gfpshim.
server = subprocess.Popen(["sleep", "60"], env=dict(os.environ, LD_PRELOAD=os.environ["SHIM"],
                                                    GFP_POLICY="ctl=1", XDG_RUNTIME_DIR=xdg))
sock = os.path.join(xdg, "gfpshim", f"{server.pid}.sock")
deadline = time.time() + 10
while not os.path.exists(sock) and time.time() < deadline:
    time.sleep(0.05)

# (function, the line, COMP_WORDS as bash splits the line, the replies)
cases = [
    ("_gfp_run", "gfp-run --policy mi", ["gfp-run", "--policy", "mi"], ["min_free="]),
    ("_gfp_run", "gfp-run --policy ", ["gfp-run", "--policy", ""], [k + "=" for k in keys]),
    ("_gfp_sweep", "gfp-sweep --policy ", ["gfp-sweep", "--policy", ""],
     [k + "=" for k in keys if not k.startswith("fail.")]),
    ("_gfp_run", "gfp-run --policy stats=to", ["gfp-run", "--policy", "stats", "=", "to"],
     ["totals"]),
    ("_gfp_run", "gfp-run --policy limit=64M,sta",
     ["gfp-run", "--policy", "limit", "=", "64M,sta"], ["64M,stats="]),
    ("_gfp_run", "gfp-run --policy 'limit=64M;sta", ["gfp-run", "--policy", "'limit=64M;sta"],
     ["limit=64M;stats="]),
    ("_gfp_run", "gfp-run --policy=mi", ["gfp-run", "--policy", "=", "mi"], ["min_free="]),
    ("_gfp_run", "gfp-run --policy 'default=NOFS|NOF",
     ["gfp-run", "--policy", "'default=NOFS|NOF"],
     ["default=NOFS|" + f for f in flags if f.startswith("NOF")]),
    ("_gfp_run", "gfp-run --rules 'lib:x => NOW", ["gfp-run", "--rules", "'lib:x => NOW"],
     ["lib:x => " + f for f in flags if f.startswith("NOW")]),
    ("_gfp_run", "gfp-run --rules si", ["gfp-run", "--rules", "si"], ["size>", "size<"]),
    ("_gfp_sweep", "gfp-sweep --mode ", ["gfp-sweep", "--mode", ""], ["sites", "nth"]),
    ("_gfp_sweep", "gfp-sweep --mo", ["gfp-sweep", "--mo"], ["--mode"]),
    ("_gfp_report", "gfp-report me", ["gfp-report", "me"], ["merge"]),
    ("_gfp_ctl", "gfp-ctl 12 ", ["gfp-ctl", "12", ""], ["get", "set", "report", "status"]),
    ("_gfp_ctl", "gfp-ctl 12 get fail.si", ["gfp-ctl", "12", "get", "fail.si"],
     [k for k in keys if k.startswith("fail.si")]),
    ("_gfp_ctl", "gfp-ctl 12 set oom=", ["gfp-ctl", "12", "set", "oom", "="],
     next(r["choices"] for r in rows if r["name"] == "oom")),
    ("_gfp_ctl", "gfp-ctl ", ["gfp-ctl", ""], None),
]
# Every key whose values can be listed: an ENUM's choices, 0 and 1.
for r in rows:
    values = r["choices"] if r["type"] in ("ENUM", "COUNT") else ["0", "1"] \
        if r["type"] == "BOOL" else None
    if values:
        line = f"gfp-run --policy {r['name']}="
        cases.append(("_gfp_run", line, ["gfp-run", "--policy", r["name"], "="], values))
# Every tool's options: compared below with what the tool knows.
option_cases = {"gfp-run": "_gfp_run", "gfp-sweep": "_gfp_sweep", "gfp-report": "_gfp_report",
                "gfp-ctl": "_gfp_ctl"}
for tool, fn in option_cases.items():
    cases.append((fn, f"{tool} -", [tool, "-"], None))
cases.append(("_gfp_report", "gfp-report merge -", ["gfp-report", "merge", "-"], None))
cases.append(("_gfp_run", "gfp-run -- pytho", ["gfp-run", "--", "pytho"], None))

script = [f"source {shlex.quote(main)}"]
for fn, line, words, _ in cases:
    script.append(f"COMP_LINE={shlex.quote(line)} COMP_POINT={len(line)} "
                  f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}) "
                  f"COMP_CWORD={len(words) - 1} COMPREPLY=(); {fn}; "
                  "printf '%s\\n' \"${COMPREPLY[@]}\"; echo @@end@@")
# In an empty directory: file names complete too.
p = subprocess.run(["bash", "--norc", "-c", "\n".join(script)], capture_output=True, text=True,
                   env=dict(os.environ, XDG_RUNTIME_DIR=xdg), cwd=tempfile.mkdtemp())
server.kill()
server.wait()
check("bash", not p.stderr, p.stderr)
replies = [[r for r in block.split("\n") if r] for block in p.stdout.split("@@end@@\n")]
for (fn, line, words, want), got in zip(cases, replies):
    if want is not None:
        check(f"{line!r}", sorted(got) == sorted(want), f"{sorted(got)}, not {sorted(want)}")
option_replies = dict(zip([c[1] for c in cases], replies))
for tool in tools.TOOLS:
    offered = set(option_replies[f"{tool} -"])
    if tool == "gfp-report":
        offered |= set(option_replies["gfp-report merge -"])
    named = tools.synopsis_options(tools.help_text(tool))
    check(f"{tool} -: the options --help names", named <= offered,
          f"not offered: {sorted(named - offered)}")
    for o in sorted(offered):
        check(f"{tool} -: {o}", tools.accepts(tool, o), "offered, but the tool does not know it")
# Other users of the shim may listen too (in /tmp/gfpshim-UID).
ctl = option_replies["gfp-ctl "]
check("gfp-ctl: the listening process and the options",
      str(server.pid) in ctl and {"--help", "--version"} <= set(ctl)
      and all(r.isdigit() or r in ("--help", "--version", "--list", "--json") for r in ctl),
      f"{ctl}")
check("gfp-run -- pytho", "python3" in option_replies["gfp-run -- pytho"],
      f"{option_replies['gfp-run -- pytho']}")


def readline_completes(lines):
    """What an interactive bash makes of each line and a TAB."""
    got = []
    with tools.Bash(main, os.environ) as sh:
        for line in lines:
            time.sleep(0.2)
            sh.type(line + "\t", 0.5)
            got.append(sh.line())
    return got


real = {"gfp-run --policy mi": "gfp-run --policy min_free=",
        "gfp-run --policy stats=to": "gfp-run --policy stats=totals ",
        "gfp-sweep --mo": "gfp-sweep --mode "}
for (line, want), got in zip(real.items(), readline_completes(list(real))):
    check(f"bash -i: {line!r} TAB", got == want, f"{got!r}, not {want!r}")

for f in failures:
    print("FAIL:", f)
print(f"{len(cases)} completions, {len(real)} in a real bash")
sys.exit(1 if failures else 0)
