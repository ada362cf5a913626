#!/usr/bin/python3
"""meson install puts gfp-run(1), gfp-sweep(1), gfp-report(1), gfp-ctl(1)
and gfpshim(7) in mandir; each renders without a groff warning and has the
sections a man page has; a tool's page lists the exit statuses and the
options its --help does; gfpshim(7) lists every key of src/policy/keys.def (read
here, not by the code) with its default, every flag name of src/policy/flags.c and
every GFP_* variable src/ reads."""
import glob
import os
import re
import subprocess
import sys
import tempfile

import tools

failures = []


def check(what, cond, detail=""):
    if not cond:
        failures.append(f"{what}: {detail}")


TOOL_SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT",
                 "EXAMPLES", "SEE ALSO"]
destdir = tempfile.mkdtemp()
prefix = tools.install(destdir)
mandir = os.path.join(prefix, tools.build_options()["mandir"])
pages = {d: s for d, s in tools.installed().items() if d.startswith(mandir + "/")}
want = {f"{mandir}/man1/{t}.1" for t in tools.TOOLS} | {f"{mandir}/man7/gfpshim.7"}
check("man pages meson install lists", set(pages) == want, f"{sorted(pages)}")

for dest in sorted(want):
    page = destdir + dest
    name = os.path.basename(dest)
    if not os.path.isfile(page):
        check(name, False, f"not installed at {page}")
        continue
    p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page], capture_output=True,
                       text=True)
    check(f"{name}: groff -ww", p.returncode == 0 and not p.stderr, p.stderr)
    m = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                       env=dict(os.environ, MANPAGER="cat", MANWIDTH="100"))
    check(f"{name}: man -l", m.returncode == 0 and "SEE ALSO" in m.stdout,
          f"status {m.returncode}: {m.stderr}")
    text = tools.render(page)
    secs = tools.sections(text)
    if name.endswith(".1"):
        tool = name[:-2]
        check(f"{name}: sections", [s for s in secs if s in TOOL_SECTIONS] == TOOL_SECTIONS,
              f"{list(secs)}")
        # The statuses: "       N" paragraphs tags under EXIT STATUS.
        statuses = {int(m.group(1)) for line in secs.get("EXIT STATUS", [])
                    if (m := re.match(r"^ {7}(\d+)(\s|$)", line))}
        listed = set(tools.exit_statuses(tools.help_text(tool)))
        check(f"{name}: EXIT STATUS", statuses == listed,
              f"the page lists {sorted(statuses)}, --help {sorted(listed)}")
        # Every option of the tool's --help synopsis has a paragraph.
        opts = {o for line in secs.get("OPTIONS", []) if re.match(r"^ {7}-", line)
                for o in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", line)}
        synopsis = tools.synopsis_options(tools.help_text(tool))
        check(f"{name}: OPTIONS", synopsis <= opts,
              f"--help names {sorted(synopsis - opts)}, the page does not")
        for o in sorted(opts):
            check(f"{name}: OPTIONS {o}", tools.accepts(tool, o), "the tool does not know it")
    else:
        for s in ["NAME", "SYNOPSIS", "DESCRIPTION", "ENVIRONMENT", "POLICY KEYS", "FLAGS",
                  "EXAMPLES", "SEE ALSO"]:
            check(f"{name}: section {s}", s in secs, f"{list(secs)}")
        # Each key is a paragraph tag "       name=VALUE", then its help, then
        # "Default: X." (and its bounds).
        entries, cur = [], None
        for line in secs.get("POLICY KEYS", []):
            m = re.match(r"^ {7}([a-z_.]+)=(\S*)$", line)
            if m:
                cur = {"name": m.group(1), "value": m.group(2)}
                entries.append(cur)
            elif cur and (d := re.match(r"^ {14}Default: (.*?)(;.*)?\.$", line)):
                cur["default"] = d.group(1)
        rows = tools.keys_def()
        check("gfpshim.7: keys in keys.def order", [e["name"] for e in entries] ==
              [r["name"] for r in rows],
              f"missing {sorted({r['name'] for r in rows} - {e['name'] for e in entries})}, "
              f"extra {sorted({e['name'] for e in entries} - {r['name'] for r in rows})}")
        for e, r in zip(entries, rows):
            check(f"gfpshim.7: {r['name']} default", e.get("default") == (r["default"] or "empty"),
                  f"{e.get('default')!r}, keys.def says {r['default']!r}")
            if r["type"] == "ENUM":
                check(f"gfpshim.7: {r['name']} choices", e["value"] == "|".join(r["choices"]),
                      e["value"])
        flags = {m.group(1) for line in secs.get("FLAGS", [])
                 if (m := re.match(r"^ {7}([A-Z_]+)\b", line))}
        check("gfpshim.7: FLAGS", flags == set(tools.flag_names()),
              f"the page {sorted(flags)}, flags.c {sorted(tools.flag_names())}")
        env = {m.group(1) for line in secs.get("ENVIRONMENT", [])
               if (m := re.match(r"^ {7}([A-Z_]+)\b", line))}
        read = set()
        for f in glob.glob(os.path.join(tools.SRC, "src", "*.c")):
            read |= set(re.findall(r'getenv\("(GFP_\w+)"\)', open(f).read()))
        check("gfpshim.7: ENVIRONMENT", read and read <= env,
              f"src/ reads {sorted(read - env)}, not in the page")
        print(f"gfpshim.7: {len(entries)} keys, {len(flags)} flags, {len(env)} variables")

for f in failures:
    print("FAIL:", f)
print(f"{len(want)} pages checked")
sys.exit(1 if failures else 0)
