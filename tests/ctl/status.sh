#!/bin/bash
# gfp-ctl PID status shows a running process's budget for people, in the
# units of the shim's own messages (B, KiB, MiB, GiB: one decimal,
# rounded), and --json the same numbers in bytes; an error the process
# answers is said by gfp-ctl, naming the process and the shim that said
# it. The target is CPython with two threads waiting, which names itself
# with an escape sequence and UTF-8 (prctl PR_SET_NAME): the name shows its
# control bytes as \xNN, the UTF-8 as it is, and nothing gfp-ctl prints
# holds a raw control byte. Run under a UTF-8 locale; a second target
# without a limit shows none.
source "$TESTS/lib.sh"
need_c_utf8
GFP_CTL=$BUILD/tools/gfp-ctl
[ -x "$GFP_CTL" ] || fail "not built: $GFP_CTL"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY
mkdir -m 0700 "$TMP/xdg" || fail "mkdir $TMP/xdg"
export XDG_RUNTIME_DIR=$TMP/xdg LC_ALL=C.UTF-8

GFPTEST_REAPER=$_GFP_REAPER_PY /usr/bin/python3 - "$SHIM" "$GFP_CTL" <<'PY' || fail "see above"
import json, os, re, subprocess, sys

shim, gfp_ctl = sys.argv[1:3]
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.environ["TESTS"], "ctl"))
from ctl_py import check, failures, no_control_bytes, reads_as, status_rows, stop
NAME = b"srv\x1b[1m\xc3\xa9"  # what the target calls itself
SHOWN = "srv\\x1b[1mé"      # how gfp-ctl must show it

TARGET = r'''
import ctypes, os, sys, threading
ctypes.CDLL(None).prctl(15, NAME, 0, 0, 0)  # PR_SET_NAME
stop = threading.Event()
workers = [threading.Thread(target=stop.wait) for _ in range(2)]
for w in workers:
    w.start()
held = []
print("pid", os.getpid(), flush=True)
for line in sys.stdin:
    if line.startswith("hold "):
        held.append(bytearray(int(line.split()[1])))
        print("held", flush=True)
stop.set()
for w in workers:
    w.join()
'''.replace("NAME", repr(NAME))


def start(policy):
    # Killed after 50 s whatever becomes of this test, with all it started
    # (lib.sh's reaper, outside the shim).
    p = subprocess.Popen([sys.executable, "-c", os.environ["GFPTEST_REAPER"], "--deadline", "50",
                          "--", "env", f"LD_PRELOAD={shim}",
                          f"GFP_POLICY={policy}", "/usr/bin/python3", "-c", TARGET],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    line = p.stdout.readline().decode()
    if not line.startswith("pid "):
        p.kill()
        sys.exit(f"FAIL: the target did not start: {line!r}")
    return p, int(line.split()[1])


def ctl(*args):
    p = subprocess.run([gfp_ctl] + [str(a) for a in args], capture_output=True, timeout=50)
    no_control_bytes(f"gfp-ctl {' '.join(map(str, args))}", p.stdout, p.stderr)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def status(pid, tag):
    """The status for people between two in JSON: {row: (value, remark)}."""
    rc0, before, err0 = ctl(pid, "status", "--json")
    rc, human, err = ctl(pid, "status")
    rc1, after, err1 = ctl("--json", pid, "status")
    if not check(f"{tag}: exit statuses", (rc0, rc, rc1) == (0, 0, 0), f"{(rc0, rc, rc1)}: {err0}{err}{err1}"):
        return None, None, None
    raw = [json.loads(before), json.loads(after)]
    rows = status_rows(human, tag)
    check(f"{tag}: pid and name", rows.get("pid", ("",))[0] == f"{pid} ({SHOWN})", rows.get("pid"))
    return rows, raw, human


# Under a limit: every byte count reads as the JSON's, the limit exactly.
proc, pid = start("ctl=1;limit=256M")
try:
    rows, raw, human = status(pid, "limit=256M")
    if rows:
        check("json: the limit in bytes", raw[0]["limit"] == 256 << 20, raw[0])
        check("limit", rows.get("limit", ("",))[0] == "256.0 MiB", rows.get("limit"))
        check("threads", raw[0]["threads"] >= 3 and rows["threads"][0] == str(raw[0]["threads"]),
              f"{rows.get('threads')} {raw[0]}")
        # jemalloc's counts move on their own (its purge runs on time): a
        # tenth either way.
        for key, slack in (("live", 0), ("free", 0), ("min_free", 0), ("reserved", 0),
                           ("allocated", 0.1), ("resident", 0.1)):
            vals = [r[key] for r in raw]
            check(f"{key}: bytes in the JSON", all(isinstance(v, int) for v in vals), vals)
            check(f"{key}: '{rows.get(key)}' reads as {vals}",
                  key in rows and reads_as(rows[key][0], min(vals), max(vals), slack), human)
    # 48 MiB more held by the main thread: live follows, in MiB.
    proc.stdin.write(f"hold {48 << 20}\n".encode())
    proc.stdin.flush()
    check("hold", proc.stdout.readline() == b"held\n")
    rows2, raw2, human2 = status(pid, "after 48 MiB")
    if rows and rows2:
        grew = raw2[0]["live"] - raw[1]["live"]
        # (in jemalloc's size class: a quarter more at most)
        check("live grew by the 48 MiB held", 48 << 20 <= grew <= 60 << 20, grew)
        check("live in MiB", rows2["live"][0].endswith(" MiB") and
              reads_as(rows2["live"][0], raw2[0]["live"], raw2[1]["live"]), human2)

    # Errors the process answers: said by gfp-ctl, of the process, by the shim.
    who = re.escape(f"gfp-ctl: error: pid {pid} ({SHOWN}) refused: gfpshim: ")
    for args, rc, said in [
            (["set", "stats=sites"], 1, r"not applied at run time: stats= cannot change"),
            (["set", "limit=banana", "oom=never"], 125, r"gfp-ctl set: .*"),
            (["get", "fail.sed"], 1, r"unknown key 'fail\.sed' \(did you mean 'fail\.seed'\?\)"),
    ]:
        got, out, err = ctl(pid, *args)
        lines = err.splitlines()
        check(f"{args}: status", got == rc, f"{got}: {err}")
        check(f"{args}: nothing on stdout", out == "", out)
        check(f"{args}: every line gfp-ctl's, of pid {pid}, the shim's words",
              lines and all(re.match(who, l) for l in lines) and re.match(who + said, lines[0]),
              lines)
    check("two errors, two lines", len(ctl(pid, "set", "limit=banana", "oom=never")[2].splitlines()) == 2)
finally:
    stop(proc)

# Without a limit: none, and jemalloc's counts still.
proc, pid = start("ctl=1")
try:
    rows, raw, human = status(pid, "no limit")
    if rows:
        check("json: limit 0, no live", raw[0]["limit"] == 0 and "live" not in raw[0], raw[0])
        check("limit none", rows.get("limit", ("",))[0] == "none", human)
        check("no live row", "live" not in rows, human)
        vals = [r["allocated"] for r in raw]
        check("allocated", "allocated" in rows and reads_as(
            rows["allocated"][0], min(vals), max(vals), 0.1), human)
finally:
    stop(proc)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
