#!/usr/bin/python3
"""Checks an OOM report of a tree (the requester's log) field by field."""
import argparse
import re
import sys

ap = argparse.ArgumentParser()
ap.add_argument("log")
ap.add_argument("--requester", type=int, required=True)
ap.add_argument("--victim", type=int, action="append", required=True)
ap.add_argument("--members", required=True, help="pids in the task dump of the first report")
ap.add_argument("--victim-live-mib", type=float, action="append", required=True)
ap.add_argument("--victim-adj", type=int, action="append", required=True)
ap.add_argument("--timed-out", type=int, action="append", default=[])
a = ap.parse_args()

text = open(a.log, encoding="utf-8", errors="replace").read()
lines = [l for l in text.splitlines() if l.startswith("gfpshim: ")]
PFX = "gfpshim: error: "


def unit(v, u):
    return float(v) * {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[u]


invoked = [i for i, l in enumerate(lines) if " invoked oom-killer: " in l]
assert len(invoked) == len(a.victim), "%d reports for %d victims:\n%s" % (len(invoked), len(a.victim), text)
for n, start in enumerate(invoked):
    head = re.match(PFX + r"tree_prog\((\d+)\) invoked oom-killer: size=4096 order=0 mode:KERNEL 0xcc0 oom_score_adj=(-?\d+)$",
                    lines[start])
    assert head and int(head.group(1)) == a.requester, lines[start]
    i = start + 1
    while not lines[i].startswith(PFX + "Tasks state"):
        i += 1
    assert re.match(PFX + r"Tasks state \(members of the tree .*; memory in binary units\):$", lines[i]), lines[i]
    assert lines[i + 1] == PFX + "[  pid  ] threads       live    charged oom_score_adj name", lines[i + 1]
    dump = {}
    i += 2
    while True:
        m = re.match(PFX + r"\[ *(\d+)\] +(\d+) +([\d.]+) (B|KiB|MiB|GiB) +([\d.]+) (B|KiB|MiB|GiB) +(-?\d+) (\S+)$", lines[i])
        if not m:
            break
        dump[int(m.group(1))] = {"live": unit(m.group(3), m.group(4)), "charged": unit(m.group(5), m.group(6)),
                                 "adj": int(m.group(7)), "name": m.group(8)}
        i += 1
    if n == 0:
        want = {int(p) for p in a.members.split(",")}
        assert set(dump) == want, "task dump pids %s, expected %s" % (sorted(dump), sorted(want))
    v = a.victim[n]
    assert v in dump, "victim %d not in the dump %s" % (v, dump)
    assert dump[v]["name"] == "tree_prog", dump[v]
    assert dump[v]["adj"] == a.victim_adj[n], dump[v]
    assert abs(dump[v]["live"] - a.victim_live_mib[n]) < 1, dump[v]
    kill = lines[i]
    m = re.match(PFX + r"Out of memory: Killed process (\d+) \(tree_prog\) live:([\d.]+) MiB charged:([\d.]+) MiB "
                 r"share:(\d+)% of the tree's ([\d.]+) MiB oom_score_adj:(-?\d+)$", kill)
    assert m, "no kill line after the dump: %r" % kill
    assert int(m.group(1)) == v, kill
    assert abs(float(m.group(2)) - a.victim_live_mib[n]) < 1, kill
    tree = float(m.group(5))
    assert 60 <= tree <= 64, kill
    share = int(m.group(4))
    assert share == int(float(m.group(3)) * 100 / tree) or abs(share - float(m.group(3)) * 100 / tree) < 1, kill
    assert int(m.group(6)) == a.victim_adj[n], kill
    print("# report %d: victim %d, live %s MiB, share %d%% of %.1f MiB, %d members in the dump"
          % (n + 1, v, m.group(2), share, tree, len(dump)))

for t in a.timed_out:
    assert any(re.match(r"gfpshim: warning: oom: process %d \(tree_prog\) still holds [\d.]+ MiB \d+ ms after it was "
                        r"killed \(oom.victim_timeout=\d+ms\): choosing the next victim$" % t, l) for l in lines), \
        "no timeout line for %d:\n%s" % (t, text)
back = [v for v in a.victim if v not in a.timed_out]
for v in back:
    assert any(re.match(r"gfpshim: info: oom_reaper: reaped process %d \(tree_prog\): [\d.]+ MiB back to the tree \d+ ms "
                        r"after the kill$" % v, l) for l in lines), "no oom_reaper line for %d:\n%s" % (v, text)
