#!/usr/bin/python3
"""recsum.py - sums up the failure records (GFP_RECORD) of the rules tests.

  recsum.py who FILE [EVENT]
                       one line per EVENT (failure) record, in order:
                       "WHO SIZE FLAGS ROUNDS", WHO being the first frame
                       among rules_prog's requesters (a, b, ga, sd, thr,
                       late, fill; '?' for none), ROUNDS '-' when it has none
  recsum.py lib FILE   "MODULE FLAGS ROUNDS COUNT" per kind of failure
                       record, MODULE being that of the first frame outside
                       libc (the caller of strdup, not strdup)
"""
import json
import sys

WHO = {"caller_a_explicit": "ga", "caller_strdup": "sd", "caller_a": "a",
       "caller_b": "b", "worker_main": "thr", "late_main": "late", "fill": "fill"}
LIBC = ("libc.so", "ld-linux", "libgfpshim")


def failures(path, event="failure"):
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("event") == event:
                yield r


def who(r):
    for fr in r.get("frames", []):
        name = fr.get("symbol", "").split("+")[0]
        if name in WHO:
            return WHO[name]
    return "?"


def first_outside_libc(r):
    for fr in r.get("frames", []):
        mod = fr.get("module", "?")
        if not mod.startswith(LIBC):
            return mod
    return "?"


def main():
    args = sys.argv[1:]
    if args[:1] == ["who"] and len(args) in (2, 3):
        for r in failures(*args[1:]):
            print(who(r), r["size"], r["flags"], r.get("rounds", "-"))
    elif args[:1] == ["lib"] and len(args) == 2:
        counts = {}
        for r in failures(args[1]):
            k = (first_outside_libc(r), r["flags"], r.get("rounds", "-"))
            counts[k] = counts.get(k, 0) + 1
        for k, n in sorted(counts.items(), key=str):
            print(*k, n)
    else:
        sys.exit(__doc__)


main()
