#!/usr/bin/python3
"""README.md's excerpt of tools/demo is what the demo's sweep prints: every
line of the excerpt but its "..." elisions appears in gfp-sweep's output,
in order, as tools/demo runs it (from the source tree, on the bundled
example). What differs between checkouts and machines is left out of the
comparison: the checkout's directory, -j (the CPUs), hexadecimal offsets
and site ids (the compiler's and libc's layout)."""
import os
import re
import sys

import tools

sys.path.insert(0, os.path.join(os.environ["TESTS"], "sweep"))
import bounded  # noqa: E402

build = os.path.relpath(tools.BUILD, tools.SRC)


def normal(line):
    line = line.rstrip()
    line = re.sub(r"cd -- \S+ &&", "cd -- DIR &&", line)
    line = re.sub(r"\S*/tools/gfp-run\b", "GFP_RUN", line)
    line = line.replace(f"{build}/tests/example/", "build/tests/example/")
    line = re.sub(r"-j \d+", "-j N", line)
    line = re.sub(r"\b[0-9a-f]{16}\b", "ID", line)
    return re.sub(r"0x[0-9a-f]+", "0xN", line)


text = open(os.path.join(tools.SRC, "README.md"), encoding="utf-8").read()
m = re.search(r"\(excerpt\):\n\n```\n(.*?)^```", text, re.M | re.S)
if not m:
    sys.exit("FAIL: README.md has no code block after '(excerpt):'")
excerpt = [normal(l) for l in m.group(1).splitlines()]

st, out, err = bounded.run([os.path.join(tools.BUILD, "tools", "gfp-sweep"), "--",
                            f"{build}/tests/example/inventory", "tests/example/inventory.txt"],
                           300, cwd=tools.SRC)
if st != 1:
    sys.exit(f"FAIL: gfp-sweep exited {st}, 1 (findings) expected: {err.decode()[-800:]}")
printed = [normal(l) for l in out.decode().splitlines()]

# Each excerpt line in order; "X ..." stands for a line that starts with X.
at, missing = 0, []
for want in excerpt:
    if want.strip() in ("", "..."):
        continue
    prefix = want[:-3].rstrip() if want.endswith(" ...") else None
    for i in range(at, len(printed)):
        if printed[i] == want or (prefix is not None and printed[i].startswith(prefix)):
            at = i + 1
            break
    else:
        missing.append(want)
checked = sum(1 for l in excerpt if l.strip() not in ("", "..."))
print(f"# {checked} lines of the excerpt checked against {len(printed)} lines printed")
if missing:
    print("FAIL: README.md's demo excerpt has lines the sweep does not print (in this order):")
    for l in missing:
        print(f"  {l}")
    print("the sweep printed:")
    print("\n".join(f"  {l}" for l in printed[:60]))
    sys.exit(1)
