#!/usr/bin/python3
"""recsum.py - sums up the failure records (GFP_RECORD) of the rules tests.

  recsum.py who FILE [EVENT]
                       one line per EVENT (failure) record, in order:
                       "WHO SIZE FLAGS HOW", WHO being the first frame
                       among rules_prog's requesters (a, b, ga, sd, thr,
                       late, fill; '?' for none), HOW what the slow path did
                       with the flags (see how(); '-' for no reason)
  recsum.py lib FILE   "MODULE FLAGS HOW COUNT" per kind of failure
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


def how(r):
    """The failure's reason, as a word: 'oom' (looped to the OOM step,
    which gave up under oom=fail), 'noretry' (NORETRY: one round),
    'mayfail' (RETRY_MAYFAIL gave up), 'costly' (one round above costly=);
    other reasons as they are, spaces made '_'."""
    reason = r.get("reason", "-")
    for key, word in (("the OOM step gave up", "oom"), ("NORETRY:", "noretry"),
                      ("RETRY_MAYFAIL:", "mayfail"), ("costly size", "costly")):
        if key in reason:
            return word
    return reason.replace(" ", "_")


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
            print(who(r), r["size"], r["flags"], how(r))
    elif args[:1] == ["lib"] and len(args) == 2:
        counts = {}
        for r in failures(args[1]):
            k = (first_outside_libc(r), r["flags"], how(r))
            counts[k] = counts.get(k, 0) + 1
        for k, n in sorted(counts.items(), key=str):
            print(*k, n)
    else:
        sys.exit(__doc__)


main()
