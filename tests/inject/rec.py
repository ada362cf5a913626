#!/usr/bin/python3
"""rec.py - reads GFP_RECORD files (one JSON object per line) for the tests.

  rec.py check FILE...         every line is a well-formed record (doc/injection.md)
  rec.py count FILE EVENT      how many records of EVENT
  rec.py events FILE           the event of each record, one per line
  rec.py get FILE EVENT FIELD  FIELD of each EVENT record, one per line
                               (frames: "module symbol" of each frame, ';'-joined)
  rec.py sites FILE            "size site top-symbol" of each injection record
"""
import json
import re
import sys

EVENTS = {"injection", "failure", "canary", "oom", "crash", "caught", "caught_left"}
SIGNALLED = {"crash", "caught"}  # a fatal signal and its frames (src/crash.c)
HEX16 = re.compile(r"^[0-9a-f]{16}$")


def load(path):
    recs = []
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        raise SystemExit(f"{path}: the last record is not a complete line")
    for i, raw in enumerate(data.splitlines(), 1):
        if len(raw) + 1 > 4096:
            raise SystemExit(f"{path}:{i}: record of {len(raw) + 1} bytes, more than 4096")
        try:
            r = json.loads(raw)
        except ValueError as e:
            raise SystemExit(f"{path}:{i}: not JSON ({e}): {raw[:200]!r}")
        if not isinstance(r, dict):
            raise SystemExit(f"{path}:{i}: not an object")
        r["_line"] = i
        recs.append(r)
    return recs


def frame_str(fr):
    return f"{fr.get('module', '?')} {fr.get('symbol', '?')}"


def check(path):
    recs = load(path)
    seqs = {}
    tids = {}
    for r in recs:
        where = f"{path}:{r['_line']}"
        ev = r.get("event")
        if ev not in EVENTS:
            raise SystemExit(f"{where}: event {ev!r} is not one of {sorted(EVENTS)}")
        if ev == "caught_left":  # the program's handler returned or jumped out: no frames
            if not isinstance(r.get("signal"), int) or r.get("how") not in ("return", "longjmp"):
                raise SystemExit(f"{where}: caught_left without signal and how: {r!r}")
            r["frames"] = None
        for k, t in (("pid", int), ("tid", int), ("seq", int), ("frames", list)):
            if r["frames"] is None and k == "frames":
                continue
            if not isinstance(r.get(k), t):
                raise SystemExit(f"{where}: {ev}: field {k} missing or not {t.__name__}: {r.get(k)!r}")
        if ev not in SIGNALLED and ev != "caught_left":
            for k, t in (("site", str), ("size", int), ("flags", str), ("mode", str),
                         ("entry", str)):
                if not isinstance(r.get(k), t):
                    raise SystemExit(f"{where}: {ev}: field {k} missing or not {t.__name__}: {r.get(k)!r}")
            if not HEX16.match(r["site"]):
                raise SystemExit(f"{where}: site {r['site']!r} is not 16 hex digits")
            if not re.match(r"^0x[0-9a-f]+$", r["mode"]):
                raise SystemExit(f"{where}: mode {r['mode']!r} is not 0x...")
            if not re.match(r"^[A-Z_]+(\|[A-Z_]+)*$", r["flags"]):
                raise SystemExit(f"{where}: flags {r['flags']!r} are not names")
        if ev == "injection" and not isinstance(r.get("call"), int):
            raise SystemExit(f"{where}: injection without an integer call: {r.get('call')!r}")
        if ev in SIGNALLED and not isinstance(r.get("signal"), int):
            raise SystemExit(f"{where}: crash without an integer signal: {r.get('signal')!r}")
        if r["frames"] is not None and not r["frames"]:
            raise SystemExit(f"{where}: {ev} with no frames")
        for fr in r["frames"] or []:
            if not isinstance(fr, dict) or not isinstance(fr.get("module"), str) \
                    or not re.match(r"^0x[0-9a-f]+$", str(fr.get("offset"))):
                raise SystemExit(f"{where}: bad frame {fr!r}")
            if "/" in fr["module"]:
                raise SystemExit(f"{where}: frame module {fr['module']!r} is not a basename")
            if "symbol" in fr and not re.match(r"^.+\+0x[0-9a-f]+$", str(fr["symbol"])):
                raise SystemExit(f"{where}: frame symbol {fr['symbol']!r} is not func+0x...")
        # Threads race to write(2), so only each thread's records are in
        # seq order; the seqs of a process are 1, 2, 3... with no gap.
        last = tids.get((r["pid"], r["tid"]), 0)
        if r["seq"] <= last:
            raise SystemExit(f"{where}: seq {r['seq']} of pid {r['pid']} tid {r['tid']} after {last}")
        tids[(r["pid"], r["tid"])] = r["seq"]
        seqs.setdefault(r["pid"], []).append(r["seq"])
    for pid, got in seqs.items():
        if sorted(got) != list(range(1, len(got) + 1)):
            raise SystemExit(f"{path}: seqs of pid {pid} are not 1..{len(got)}: {sorted(got)[:50]}")
    print(f"{len(recs)} records ok")


def main(argv):
    cmd = argv[1]
    if cmd == "check":
        for path in argv[2:]:
            check(path)
    elif cmd == "count":
        print(sum(1 for r in load(argv[2]) if r.get("event") == argv[3]))
    elif cmd == "events":
        for r in load(argv[2]):
            print(r.get("event"))
    elif cmd == "get":
        for r in load(argv[2]):
            if r.get("event") != argv[3]:
                continue
            v = r.get(argv[4])
            if argv[4] == "frames":
                v = ";".join(frame_str(f) for f in v or [])
            print(v)
    elif cmd == "sites":
        for r in load(argv[2]):
            if r.get("event") == "injection":
                fr = r.get("frames") or [{}]
                print(r.get("size"), r.get("site"), frame_str(fr[0]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
