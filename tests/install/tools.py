"""What the install suite's checks share: the tools, their --help, and
running them with their output parsed."""
import json
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import time

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


def build_options():
    out = subprocess.run(["meson", "introspect", BUILD, "--buildoptions"],
                         capture_output=True, text=True, check=True).stdout
    return {o["name"]: o["value"] for o in json.loads(out)}


def installed():
    """{destination: source} of what meson install puts where (introspect)."""
    out = subprocess.run(["meson", "introspect", BUILD, "--installed"],
                         capture_output=True, text=True, check=True).stdout
    return {dest: src for src, dest in json.loads(out).items()}


def install(destdir):
    """meson install into destdir (nothing rebuilt); returns the prefix."""
    subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet",
                    "--destdir", destdir], check=True, stdout=subprocess.DEVNULL)
    return build_options()["prefix"]


def render(page):
    """A man page as plain text, one long line per paragraph line, the
    hyphens and minus signs groff may print as U+2010/U+2212 as '-'."""
    p = subprocess.run(["groff", "-man", "-Tutf8", "-P-cbou", "-rLL=200n", page],
                       capture_output=True, text=True, check=True)
    return p.stdout.replace("\u2010", "-").replace("\u2212", "-")


def sections(text):
    """{section heading: its lines} of a rendered man page, in order."""
    found, name = {}, None
    for line in text.splitlines():
        if re.match(r"^[A-Z][A-Z -]+$", line):
            name = line
            found[name] = []
        elif name:
            found[name].append(line)
    return found


def keys_def():
    """The rows of src/policy/keys.def as this test reads them, not as the code
    does: [{name, type, default, choices}] in table order."""
    text = open(os.path.join(SRC, "src", "policy", "keys.def")).read()
    joined = re.sub(r"\\\n", " ", text)
    choices = {m.group(1): re.findall(r'C\(\w+, "([^"]*)"\)', m.group(2))
               for m in re.finditer(r"#define GFP_CHOICES_(\w+)\(C, S\)(.*)", joined)}
    rows = []
    for m in re.finditer(r'^KEY\(\s*(\w+),\s*"([^"]+)",\s*(\w+),\s*\w+,\s*"([^"]*)",'
                         r'[^,]+,[^,]+,\s*(GFP_CHOICES\((\w+)\)|"([^"]*)")', text, re.M):
        rows.append({"name": m.group(2), "type": m.group(3), "default": m.group(4),
                     "choices": choices[m.group(6)] if m.group(6)
                     else [c for c in m.group(7).split("|") if c]})
    assert len(rows) == text.count("\nKEY("), "a KEY row this test cannot read"
    return rows


def flag_names():
    """The base contexts and modifiers src/policy/flags.c names."""
    text = open(os.path.join(SRC, "src", "policy", "flags.c")).read()
    return re.findall(r'\{"([A-Z_]+)", GFP_\w+\}', text)


def synopsis_options(text):
    """The options a --help's usage lines (the first lines, up to the first
    that is not indented) name."""
    lines = text.splitlines()
    usage = [lines[0]]
    for line in lines[1:]:
        if not line.startswith(" "):
            break
        usage.append(line)
    return set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", "\n".join(usage)))


def accepts(tool, option):
    """Whether tool (or gfp-report merge) knows option: it says nothing of
    an unknown option when given it (with an argument, in case it takes
    one)."""
    for sub in [[], ["merge"]] if tool == "gfp-report" else [[]]:
        _, _, err = run([path(tool)] + sub + [option, "x", "--", "/nonexistent/prog"],
                        timeout=30)
        if "unknown option" not in err:
            return True
    return False


class Bash:
    """An interactive bash in a pty, a completion file sourced: what readline
    makes of the keys typed to it. Killed at the end of a with block."""

    def __init__(self, completion, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"],
                       dict(env, PS1="$ ", TERM="dumb"))
        self.out = b""
        self.type(f"source {shlex.quote(completion)}; echo sourced@@\n")
        self.read_until(rb"\nsourced@@")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)

    def type(self, keys, pause=0.0):
        os.write(self.fd, keys.encode())
        time.sleep(pause)

    def read_until(self, pattern, timeout=10):
        """The match of pattern in what bash printed, what came before it
        consumed; None after timeout seconds."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.search(pattern, self.out)
            if m:
                self.out = self.out[m.end():]
                return m
            if select.select([self.fd], [], [], 0.1)[0]:
                try:
                    self.out += os.read(self.fd, 65536)
                except OSError:
                    break
        return None

    def line(self):
        """The line being edited, as it stands (echoed; then it is run)."""
        self.type("\x01echo \"<\x05>\"\n")  # to the line's start, then print it
        m = self.read_until(rb"(?m)^<(.*)>\r?$")
        return m.group(1).decode() if m else None
