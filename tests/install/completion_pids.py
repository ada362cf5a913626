#!/usr/bin/python3
"""The installed bash completion offers, after gfp-ctl, the pids of this
user's processes that listen for it, as the installed gfp-ctl --list finds
them, and when bash lists the replies (a second TAB) each with its
process's name: "PID (NAME)", the name's control bytes as \\xNN, its UTF-8
as it is. A pid whose socket nobody listens on (a process that is not the
one that made it: the pid was given out again; one killed by a signal) is
not offered. One reply alone is the bare pid. Driven as bash drives the
function (COMP_TYPE 9 for a TAB, 63 for a listing), and by a real
interactive bash in a pty."""
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

import tools

failures = []


def check(what, cond, detail=""):
    if not cond:
        failures.append(f"{what}: {detail}")


# The installed tree: gfp-ctl on PATH as a user has it, and its completion.
destdir = tempfile.mkdtemp()
bindir = destdir + tools.install(destdir) + "/bin"
main = next(destdir + d for d in tools.installed()
            if "/bash-completion/completions/" in d and d.endswith("/gfp-ctl"))
xdg = tempfile.mkdtemp()
os.chmod(xdg, 0o700)
sockets = os.path.join(xdg, "gfpshim")
env = dict(os.environ, XDG_RUNTIME_DIR=xdg, PATH=bindir + ":" + os.environ["PATH"],
           LC_ALL="C.UTF-8", INPUTRC="/dev/null")
ctl = dict(env, GFP_POLICY="ctl=1")
shim = dict(ctl, LD_PRELOAD=os.environ["SHIM"])

NAME = b"srv\x1b[1m\xc3\xa9"
SHOWN = "srv\\x1b[1mé"
# A CPython with two threads that names itself NAME; a sleep; both listen.
# (It is killed after 60 s whatever becomes of this test, by a timeout
# outside the shim; the sleeps end by then.)
bounded = ["timeout", "-s", "KILL", "60", "env", "LD_PRELOAD=" + os.environ["SHIM"]]
named = subprocess.Popen(
    bounded + ["/usr/bin/python3", "-c",
     "import ctypes, os, sys, threading\n"
     f"ctypes.CDLL(None).prctl(15, {NAME!r}, 0, 0, 0)\n"
     "stop = threading.Event()\n"
     "ws = [threading.Thread(target=stop.wait) for _ in range(2)]\n"
     "[w.start() for w in ws]\n"
     "print('ready', os.getpid(), flush=True)\n"
     "sys.stdin.read()\n"
     "stop.set()\n"],
    env=ctl, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
sleeper = subprocess.Popen(["sleep", "60"], env=shim, start_new_session=True)
# A live process that does not listen, with a socket file of its pid (as
# when a pid is given out again after its listener was killed), and one
# killed by SIGKILL, whose socket stays.
stranger = subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
killed = subprocess.Popen(["sleep", "60"], env=shim, start_new_session=True)
procs = [named, sleeper, stranger, killed]


def wait_for(path):
    deadline = time.time() + 20
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.05)
    return os.path.exists(path)


try:
    ready = named.stdout.readline().split()
    if ready[:1] != [b"ready"]:
        sys.exit(f"FAIL: the named process did not start: {ready}")
    named_pid = int(ready[1])
    for pid in (named_pid, sleeper.pid, killed.pid):
        check(f"pid {pid} listens", wait_for(os.path.join(sockets, f"{pid}.sock")))
    killed.kill()
    killed.wait()
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(sockets, f"{stranger.pid}.sock"))
    s.close()

    listening = sorted([named_pid, sleeper.pid])
    names = {named_pid: SHOWN, sleeper.pid: "sleep"}
    status, out, err = tools.run([os.path.join(bindir, "gfp-ctl"), "--list"], env=env)
    check("gfp-ctl --list", (status, err) == (0, "")
          and out == "".join(f"{p}\t{names[p]}\n" for p in listening),
          f"status {status}, stdout {out!r}, stderr {err!r}")

    # The shortest start of one pid that the other does not share.
    a, b = (str(p) for p in listening)
    if b.startswith(a):
        a, b = b, a
    start = next(a[:i] for i in range(1, len(a) + 1) if not b.startswith(a[:i]))
    options = ["--help", "--version", "--list", "--json"]
    cases = [
        ("9", "", [str(p) for p in listening] + options),
        ("63", "", [f"{p} ({names[p]})" for p in listening] + options),
        ("33", "", [f"{p} ({names[p]})" for p in listening] + options),
        ("63", start, [a]),
        ("9", start, [a]),
        ("63", "--", options),
        ("63", "--json ", [f"{p} ({names[p]})" for p in listening] + options),
    ]
    script = [f"source {shlex.quote(main)}"]
    for comp_type, typed, _ in cases:
        line = "gfp-ctl " + typed
        words = line.split(" ")
        script.append(f"COMP_LINE={shlex.quote(line)} COMP_POINT={len(line)} COMP_TYPE={comp_type} "
                      f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}) "
                      f"COMP_CWORD={len(words) - 1} COMPREPLY=(); _gfp_ctl; "
                      "printf '%s\\n' \"${COMPREPLY[@]}\"; echo @@end@@")
    p = subprocess.run(["bash", "--norc", "-c", "\n".join(script)], capture_output=True,
                       text=True, env=env, timeout=60)
    check("bash", not p.stderr, p.stderr)
    replies = [[r for r in block.split("\n") if r] for block in p.stdout.split("@@end@@\n")]
    for (comp_type, typed, want), got in zip(cases, replies):
        check(f"COMP_TYPE={comp_type} 'gfp-ctl {typed}'", sorted(got) == sorted(want),
              f"{sorted(got)}, not {sorted(want)}")

    # A real bash: TAB TAB lists the pids with their names; a pid's own
    # start and a TAB completes it, bare.
    with tools.Bash(main, env) as sh:
        sh.type("gfp-ctl \t", 0.5)
        sh.type("\t")
        for p in listening:
            want = f"{p} ({names[p]})".encode()
            check(f"bash -i: gfp-ctl TAB TAB lists {want!r}",
                  sh.read_until(re.escape(want)) is not None, repr(sh.out[-500:]))
        sh.type("\x15", 0.2)  # the line killed
        sh.type(f"gfp-ctl {start}\t", 0.5)
        got = sh.line()
        check(f"bash -i: 'gfp-ctl {start}' TAB", got == f"gfp-ctl {a} ", repr(got))
finally:
    named.stdin.close()
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()

for f in failures:
    print("FAIL:", f)
print(f"{len(cases)} completions, 2 in a real bash")
sys.exit(1 if failures else 0)
