#!/usr/bin/python3
"""README.md's "Install" table lists exactly what meson install installs
(meson introspect --installed), as paths under the prefix."""
import os
import re
import sys

import tools

opts = tools.build_options()
prefix = opts["prefix"]
installed = set()
for dest in tools.installed():
    rel = os.path.relpath(dest, prefix)
    # The README spells Debian's libdir; another machine's is the same row.
    if rel.startswith(opts["libdir"] + "/"):
        rel = "lib/x86_64-linux-gnu/" + rel[len(opts["libdir"]) + 1:]
    installed.add(rel)

text = open(os.path.join(tools.SRC, "README.md")).read()
m = re.search(r"^#+ Install\n(.*?)(?=^#)", text, re.M | re.S)
assert m, "README.md has no 'Install' section"
rows = [line for line in m.group(1).splitlines()
        if line.startswith("| `")]
listed = set()
for row in rows:
    first = row.split("|")[1]
    listed |= set(re.findall(r"`([^`]+)`", first))
print(f"README lists {len(listed)} files, meson install installs {len(installed)}")
ok = True
for f in sorted(installed - listed):
    print(f"FAIL: installed, not in the README: {f}")
    ok = False
for f in sorted(listed - installed):
    print(f"FAIL: in the README, not installed: {f}")
    ok = False
sys.exit(0 if ok else 1)
