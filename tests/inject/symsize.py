#!/usr/bin/python3
"""symsize.py LOG PATH... - every named frame of the log lies inside its symbol.

A frame line reads "#N NAME+0xOFF (MODULE+0xMOFF)". For each frame whose
MODULE is the base name of one of the PATHs, some function symbol NAME of that
file (nm, .symtab or .dynsym) must start at MOFF - OFF and be at least OFF
bytes long (OFF equal to the size: a return address after a noreturn call
that ends the function). Prints each frame that breaks this and exits 1;
prints the number of frames checked otherwise.
"""
import os
import re
import subprocess
import sys

FRAME = re.compile(r"^\s*#\d+ (\S+)\+0x([0-9a-f]+) \((\S+)\+0x([0-9a-f]+)\)$")


def symbols(path):
    syms = {}
    for dyn in ([], ["-D"]):
        out = subprocess.run(["nm", "-S", "--defined-only", *dyn, path],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "TtWwi":
                syms.setdefault(f[3].split("@")[0], set()).add((int(f[0], 16), int(f[1], 16)))
    return syms


def main():
    log, paths = sys.argv[1], sys.argv[2:]
    tables = {os.path.basename(p): symbols(p) for p in paths}
    bad, checked = [], 0
    with open(log, errors="replace") as f:
        for line in f:
            m = FRAME.match(line)
            if not m or m.group(3) not in tables:
                continue
            name, off, mod, moff = m.group(1), int(m.group(2), 16), m.group(3), int(m.group(4), 16)
            checked += 1
            ok = any(start == moff - off and off <= size
                     for start, size in tables[mod].get(name, ()))
            if not ok:
                bad.append(f"{line.strip()}: {name} of {mod}: "
                           f"{sorted(tables[mod].get(name, ())) or 'no such function'}")
    if bad:
        print("frames named by a symbol that does not hold them:", *bad, sep="\n  ")
        sys.exit(1)
    print(checked)


main()
