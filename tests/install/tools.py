"""What the install suite's checks share: the tools, their --help, and
running them with their output parsed."""
import json
import os
import re
import subprocess

BUILD = os.environ["BUILD"]
SRC = os.environ["SRC"]
TOOLS = ["gfp-run", "gfp-sweep", "gfp-report", "gfp-ctl"]


def path(tool):
    return os.path.join(BUILD, "tools", tool)


def run(argv, timeout=60, **kw):
    """(status, stdout, stderr) of argv, text."""
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, **kw)
    return p.returncode, p.stdout, p.stderr


def project_version():
    out = subprocess.run(["meson", "introspect", BUILD, "--projectinfo"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["version"]


def help_text(tool):
    status, out, err = run([path(tool), "--help"])
    assert status == 0 and not err, f"{tool} --help: status {status}, stderr {err!r}"
    return out


def exit_statuses(text):
    """{status: meaning} of the "Exit status" section of a --help: its lines
    "  N  meaning", continued by deeper-indented lines."""
    lines = text.splitlines()
    start = [i for i, l in enumerate(lines) if l.startswith("Exit status")]
    assert len(start) == 1, f"one 'Exit status' section expected, got {len(start)}"
    found = {}
    last = None
    for line in lines[start[0] + 1:]:
        m = re.match(r"^  (\d+)\s+(\S.*)$", line)
        if m:
            last = int(m.group(1))
            found[last] = m.group(2)
        elif last is not None and re.match(r"^\s{4,}\S", line):
            found[last] += " " + line.strip()
        else:
            break
    assert found, "no status listed under 'Exit status'"
    return found


def long_options(text):
    """The --options a --help names."""
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text))
