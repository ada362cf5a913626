#!/bin/bash
# gfp-ctl PID status shows what the budget met and what the program mapped
# itself: an "events" row with the memory.events counts that are not 0 (or
# "none"), a "tree_events" row under limit.scope=tree, and a "mapped" row,
# the part of live the program mapped itself; --json carries the report's
# memory_events, tree_memory_events and mapped objects as numbers. At exit
# gfp-report prints the same counts and bytes as tables, and --allocinfo
# marks the rows that count mappings "mapped:yes".
# The target is CPython under limit=cgroup (a directory of cgroup v2 files,
# GFP_TEST_CGROUP: memory.max 64 MiB) with oom=fail: two threads fill the
# budget 4 KiB at a time (the OOM step runs and gives up: oom; the charges
# meet memory.max: max), the main thread asks for 100 MiB at once (max), and
# ctypes maps 16 MiB privately. It names itself with an escape sequence and
# UTF-8: the pid row shows \xNN and the UTF-8 as it is, and no output of
# gfp-ctl or gfp-report holds a raw control byte. A second target, under
# limit.scope=tree, shows the tree's events too; a listener that names its
# events with control bytes has them shown as \xNN.
source "$TESTS/lib.sh"
need_c_utf8
GFP_CTL=$BUILD/tools/gfp-ctl GFP_REPORT_TOOL=$BUILD/tools/gfp-report
[ -x "$GFP_CTL" ] && [ -x "$GFP_REPORT_TOOL" ] || fail "not built: gfp-ctl or gfp-report"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY GFP_TREE GFP_TEST_CGROUP
mkdir -m 0700 "$TMP/xdg" "$TMP/cg" || fail "mkdir"
export XDG_RUNTIME_DIR=$TMP/xdg LC_ALL=C.UTF-8
echo $((64 << 20)) >"$TMP/cg/memory.max"
echo max >"$TMP/cg/memory.high"
echo 0 >"$TMP/cg/memory.current"
echo 0 >"$TMP/cg/memory.oom.group"
printf 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n' >"$TMP/cg/memory.events"

GFPTEST_REAPER=$_GFP_REAPER_PY /usr/bin/python3 - "$SHIM" "$GFP_CTL" "$GFP_REPORT_TOOL" "$TMP" <<'PY' || fail "see above"
import json, os, re, subprocess, sys

shim, gfp_ctl, gfp_report, tmp = sys.argv[1:5]
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.environ["TESTS"], "ctl"))
from ctl_py import check, failures, no_control_bytes, reads_as, status_rows, stop
MiB = 1 << 20
NAME = b"mem\x1b[1m\xc3\xa9"  # what the target calls itself
SHOWN = "mem\\x1b[1mé"      # how gfp-ctl must show it

TARGET = r'''
import ctypes, sys, threading
libc = ctypes.CDLL(None)
libc.prctl(15, NAME, 0, 0, 0)  # PR_SET_NAME
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
maps = []

def fill():
    held = []
    try:
        while True:
            held.append(bytearray(4096))
    except MemoryError:
        pass

print("ready", flush=True)
for line in sys.stdin:
    if line.startswith("map "):
        n = int(line.split()[1])
        p = libc.mmap(None, n, 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
        if p in (None, ctypes.c_void_p(-1).value):
            print("mmap failed", flush=True)
            continue
        ctypes.memset(p, 1, n)
        maps.append(p)  # never unmapped: live in the report at exit
        print("mapped", flush=True)
    elif line.startswith("fill"):
        workers = [threading.Thread(target=fill) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        try:
            bytearray(100 * 1024 * 1024)
            print("got 100 MiB", flush=True)
        except MemoryError:
            print("filled", flush=True)
'''.replace("NAME", repr(NAME))


def start(tag, policy, env):
    # Killed after 50 s whatever becomes of this test (lib.sh's reaper).
    env = dict(os.environ, GFP_POLICY=policy, GFP_LOG=f"{tmp}/{tag}.log",
               GFP_REPORT=f"{tmp}/{tag}.json", **env)
    p = subprocess.Popen([sys.executable, "-c", os.environ["GFPTEST_REAPER"], "--deadline", "50",
                          "--preload", shim, "--", "/usr/bin/python3", "-c", TARGET], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    line = p.stdout.readline()
    if line != b"ready\n":
        p.kill()
        sys.exit(f"FAIL: {tag}: the target did not start: {line!r}")
    # The reaper's child is the target.
    kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
    return p, int(kids[0])


def say(proc, line, want):
    proc.stdin.write(line.encode() + b"\n")
    proc.stdin.flush()
    got = proc.stdout.readline().decode()
    check(f"'{line}': the target answers '{want}'", got == want + "\n", got)


def end(proc):
    stop(proc)
    check("the target exits 0", proc.returncode == 0, proc.returncode)


def run(argv, what):
    p = subprocess.run(argv, capture_output=True, timeout=50)
    no_control_bytes(what, p.stdout, p.stderr)
    check(f"{what}: exit 0", p.returncode == 0, p.stderr)
    return p.stdout.decode()


def status(pid, tag):
    """{row: (value, remark)} of the status for people, between two JSON ones."""
    before = json.loads(run([gfp_ctl, str(pid), "status", "--json"], f"{tag}: status --json"))
    human = run([gfp_ctl, str(pid), "status"], f"{tag}: status")
    after = json.loads(run([gfp_ctl, "--json", str(pid), "status"], f"{tag}: status --json"))
    rows = status_rows(human, tag)
    check(f"{tag}: pid and name", rows.get("pid", ("",))[0] == f"{pid} ({SHOWN})", rows.get("pid"))
    return rows, (before, after), human


def events_shown(text):
    """'max 2, oom 1' as [("max", 2), ("oom", 1)]; 'none' as []."""
    if text == "none":
        return []
    out = []
    for part in text.split(", "):
        name, _, n = part.partition(" ")
        out.append((name, int(n) if n.isdigit() else n))
    return out


def nonzero(obj):
    return [(k, v) for k, v in obj.items() if v]


def check_events(tag, row, key, rows, raw, human):
    check(f"{tag}: {key} is the same before and after", raw[0].get(key) == raw[1].get(key), raw)
    ev = raw[0].get(key)
    if not check(f"{tag}: {key} in the JSON", isinstance(ev, dict) and
                 all(isinstance(v, int) for v in ev.values()), raw[0]):
        return None
    check(f"{tag}: the {row} row is the nonzero counts of {key} ({ev})",
          row in rows and events_shown(rows[row][0]) == nonzero(ev), human)
    return ev


def check_mapped(tag, rows, raw, human, remark):
    live = [r.get("mapped", {}).get("live_bytes") for r in raw]
    if not check(f"{tag}: mapped.live_bytes in the JSON", all(isinstance(v, int) for v in live), raw):
        return None
    check(f"{tag}: the mapped row reads as {live}", "mapped" in rows and
          reads_as(rows["mapped"][0], min(live), max(live)), human)
    check(f"{tag}: the mapped row says it is part of live", "mapped" in rows and
          rows["mapped"][1].startswith(remark), human)
    check(f"{tag}: mapped is part of live", all(r["mapped"]["live_bytes"] <= r["live"] for r in raw), raw)
    return live[0]


# limit=cgroup: no event yet, then 16 MiB mapped, then the budget filled.
proc, pid = start("cg", "ctl=1;limit=cgroup;oom=fail;stats=sites", {"GFP_TEST_CGROUP": f"{tmp}/cg"})
try:
    rows, raw, human = status(pid, "at start")
    ev = check_events("at start", "events", "memory_events", rows, raw, human)
    check("at start: no event, the row says none", ev is not None and not nonzero(ev) and
          rows.get("events", ("",))[0] == "none", human)
    check("at start: no tree_events row", "tree_events" not in rows and
          "tree_memory_events" not in raw[0], human)
    mapped0 = check_mapped("at start", rows, raw, human, "(of live: ")

    say(proc, f"map {16 * MiB}", "mapped")
    rows, raw, human = status(pid, "mapped")
    mapped1 = check_mapped("mapped", rows, raw, human, "(of live: ")
    if mapped0 is not None and mapped1 is not None:
        # (give or take pymalloc's arenas of 1 MiB, mapped and unmapped meanwhile)
        check("mapped grew by the 16 MiB mapped", 14 * MiB <= mapped1 - mapped0 <= 20 * MiB,
              (mapped0, mapped1))

    say(proc, "fill", "filled")
    rows, raw, human = status(pid, "filled")
    ev = check_events("filled", "events", "memory_events", rows, raw, human)
    check("filled: memory.max met and the OOM step ran", ev and ev["max"] >= 1 and ev["oom"] >= 1, ev)
    check("filled: nothing killed", ev and ev["oom_kill"] == 0, ev)
    check_mapped("filled", rows, raw, human, "(of live: ")
finally:
    end(proc)

# The report at exit, as gfp-report prints it.
rep = json.load(open(f"{tmp}/cg.json"))
text = run([gfp_report, f"{tmp}/cg.json"], "gfp-report")
lines = text.splitlines()


def table(title, first):
    """The rows of the table under title: {name: {column: value}}."""
    try:
        at = lines.index(title)
    except ValueError:
        check(f"gfp-report: '{title}'", False, text)
        return {}
    head = lines[at + 1].split()
    check(f"gfp-report: '{title}' table header", head[:1] == [first], lines[at + 1])
    out = {}
    for line in lines[at + 2:]:
        if not line.startswith("  "):
            break
        cells = line.split()
        out[cells[0]] = {k: int(v) for k, v in zip(head[1:], cells[1:])}
    return out


events = table("memory events (as a cgroup's memory.events counts them):", "of")
check("gfp-report: the process's events as the report's", events.get("process") == rep["memory_events"],
      (events, rep.get("memory_events")))
check("gfp-report: the report met max and oom", rep["memory_events"]["max"] >= 1 and
      rep["memory_events"]["oom"] >= 1, rep["memory_events"])
mapped = table("memory the program mapped itself (a part of the live bytes):", "of")
check("gfp-report: mapped as the report's", mapped.get("mapped") == rep["mapped"],
      (mapped, rep.get("mapped")))
check("the report: the 16 MiB still mapped at exit", rep["mapped"]["live_bytes"] >= 16 * MiB, rep["mapped"])
marked = [r for r in rep["allocinfo"] if r.get("mapped")]
want = f"({len(marked)} of them mapped memory themselves, {sum(r['live_bytes'] for r in marked)} " \
       "bytes live: marked mapped:yes)"
check("gfp-report: the sites that mapped, and their live bytes", want in lines, (want, text))

ai = run([gfp_report, "--allocinfo", f"{tmp}/cg.json"], "gfp-report --allocinfo").splitlines()
rows = [l for l in ai[2:] if not l.startswith("#")]  # the mapped sites' summary is no row
yes = [l for l in rows if l.endswith(" mapped:yes ")]
check("--allocinfo: as many rows marked mapped:yes as the report has", len(yes) == len(marked),
      (len(yes), len(marked), ai))
check("--allocinfo: the other rows end as the kernel's do", all(
    l.endswith(" ") and "mapped:" not in l for l in rows if l not in yes), ai)
check("--allocinfo: a marked row holds the 16 MiB", any(int(l.split()[0]) >= 16 * MiB for l in yes), yes)

# limit.scope=tree: the tree's events too.
proc, pid = start("tree", "ctl=1;limit=64M;limit.scope=tree;oom=fail", {})
try:
    say(proc, "fill", "filled")
    rows, raw, human = status(pid, "tree")
    ev = check_events("tree", "events", "memory_events", rows, raw, human)
    tev = check_events("tree", "tree_events", "tree_memory_events", rows, raw, human)
    check("tree: the tree met max and the OOM step ran", tev and tev["max"] >= 1 and tev["oom"] >= 1, tev)
    check_mapped("tree", rows, raw, human, "(of this process's live: ")
finally:
    end(proc)
text = run([gfp_report, f"{tmp}/tree.json"], "gfp-report (tree)")
lines = text.splitlines()
rep = json.load(open(f"{tmp}/tree.json"))
events = table("memory events (as a cgroup's memory.events counts them):", "of")
check("gfp-report: the process's and the tree's events", events == {
    "process": rep.get("memory_events"), "tree": rep.get("tree_memory_events")}, (events, text))

# A status from a listener of this user that names its events with an OSC,
# a CSI and UTF-8 (a listener of ours, in Python): gfp-ctl shows the names
# with \xNN, and the UTF-8 as it is.
import socket, threading
EVIL = "caf\u00e9\u001b]0;owned\u0007\u001b[2J"
os.makedirs(f"{tmp}/xdg/gfpshim", mode=0o700, exist_ok=True)
srv = socket.socket(socket.AF_UNIX)
srv.bind(f"{tmp}/xdg/gfpshim/{os.getpid()}.sock")
srv.listen(1)
srv.settimeout(40)
reply = {"pid": os.getpid(), "threads": 1, "limit": 1 << 20, "limit_from": "policy",
         "scope": "tree", "live": 8192, "process_live": 8192,
         "mapped": {"live_bytes": 4096, "live_mappings": 1, EVIL: 1},
         "memory_events": {"max": 1, EVIL: 2}, "tree_memory_events": {EVIL: 3, "oom": 0}}


def serve():
    try:
        c, _ = srv.accept()
        c.recv(4096)
        c.sendall(json.dumps(reply).encode() + b"\n")
        c.close()
    except OSError as e:
        failures.append(f"the listener: {e}")


t = threading.Thread(target=serve)
t.start()
human = run([gfp_ctl, str(os.getpid()), "status"], "a hostile listener's status")
t.join()
srv.close()
rows = status_rows(human, "hostile")
shown = "caf\u00e9\\x1b]0;owned\\x07\\x1b[2J"
check("hostile: the events' names quoted", rows.get("events", ("",))[0] == f"max 1, {shown} 2", human)
check("hostile: the tree's, zeros left out", rows.get("tree_events", ("",))[0] == f"{shown} 3", human)
check("hostile: the mapped row", rows.get("mapped", ("",))[0] == "4.0 KiB", human)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
