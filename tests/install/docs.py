#!/usr/bin/python3
"""The documents: README.md and doc/*.md.

  docs.py front   README.md is a front page: at most 300 lines, the two
                  commands (tools/demo, tests/run) in its first code block,
                  and its Install table is what meson install installs
  docs.py links   every relative link of README.md and doc/*.md points to a
                  file that exists, and its #anchor to a heading there
  docs.py pages   each tool's page lists every option of its --help usage
                  and every exit status its --help gives; doc/environment.md
                  every variable src/ reads and gfpshim(7) lists; every
                  table row has its header's cells; no document, test or
                  gfp-report source cites a document users do not have
"""
import glob
import os
import re
import sys

import tools

failures = []


def check(what, cond, detail=""):
    if not cond:
        failures.append(f"{what}: {detail}")


def md_files():
    return [os.path.join(tools.SRC, "README.md")] + sorted(
        glob.glob(os.path.join(tools.SRC, "doc", "*.md")))


def rel(path):
    return os.path.relpath(path, tools.SRC)


def prose(text):
    """The text outside fenced code blocks, one entry per line (code
    lines blanked, so that line numbers stay)."""
    out, fence = [], None
    for line in text.splitlines():
        m = re.match(r"^ {0,3}(```+|~~~+)", line)
        if m and (fence is None or m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)):
            fence = None if fence else m.group(1)
            out.append("")
        else:
            out.append("" if fence else line)
    return out


def slug(heading):
    """GitHub's anchor of a heading: its text without markup, lower case,
    every character but letters, digits, spaces, '-' and '_' dropped, spaces
    as '-'."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path):
    """The anchors of a markdown file's headings, numbered as GitHub numbers
    repeated ones (-1, -2, ...)."""
    seen, found = {}, set()
    for line in prose(open(path, encoding="utf-8").read()):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        n = seen.get(s, 0)
        found.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    return found


def front():
    path = os.path.join(tools.SRC, "README.md")
    text = open(path, encoding="utf-8").read()
    lines = text.splitlines()
    check("README.md: a front page", len(lines) <= 300,
          f"{len(lines)} lines, at most 300: the manual is in doc/")
    blocks = re.findall(r"^```\w*\n(.*?)^```", text, re.M | re.S)
    first = blocks[0] if blocks else ""
    for cmd in ("tools/demo", "tests/run"):
        check(f"README.md: '{cmd}' in its first code block",
              re.search(rf"^{re.escape(cmd)}(\s|$)", first, re.M), f"the first block is {first!r}")
    print(f"README.md: {len(lines)} lines")


def links():
    n = 0
    for path in md_files():
        text = "\n".join(prose(open(path, encoding="utf-8").read()))
        text = re.sub(r"`[^`\n]*`", "", text)  # code spans hold no links
        targets = re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)
        targets += re.findall(r"^\s*\[[^\]]+\]:\s*(\S+)", text, re.M)
        for t in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", t):  # http:, mailto:
                continue
            n += 1
            file, _, anchor = t.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                check(f"{rel(path)}: link {t}", False, f"{rel(dest)} does not exist")
                continue
            if anchor:
                if not dest.endswith(".md"):
                    check(f"{rel(path)}: link {t}", False, "an anchor into a file that is not markdown")
                elif anchor not in anchors(dest):
                    check(f"{rel(path)}: link {t}", False,
                          f"{rel(dest)} has no heading whose anchor is #{anchor}")
    print(f"{n} relative links in {len(md_files())} files")


def table_rows(text, heading):
    """The first cells of the table under `## heading` of a markdown text."""
    m = re.search(rf"^#+ {re.escape(heading)}\n(.*?)(?=^#|\Z)", text, re.M | re.S)
    if not m:
        return None
    return [row.split("|")[1].strip() for row in m.group(1).splitlines()
            if row.startswith("|") and not re.match(r"^\|[-| ]+\|$", row)][1:]


def pages():
    for tool in tools.TOOLS:
        path = os.path.join(tools.SRC, "doc", f"{tool}.md")
        if not os.path.exists(path):
            check(f"doc/{tool}.md", False, "missing")
            continue
        text = open(path, encoding="utf-8").read()
        helptext = tools.help_text(tool)
        named = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", text))
        synopsis = tools.synopsis_options(helptext)
        check(f"doc/{tool}.md: options", synopsis <= named,
              f"--help names {sorted(synopsis - named)}, the page does not")
        rows = table_rows(text, "Exit status")
        statuses = {int(r) for r in rows or [] if r.isdigit()}
        listed = set(tools.exit_statuses(helptext))
        check(f"doc/{tool}.md: exit statuses", listed <= statuses,
              f"--help gives {sorted(listed)}, the page's 'Exit status' table {sorted(statuses)}")

    env_md = open(os.path.join(tools.SRC, "doc", "environment.md"), encoding="utf-8").read()
    listed = set(re.findall(r"^\| `([A-Z_]+)` \|", env_md, re.M))
    read = set()
    for f in glob.glob(os.path.join(tools.SRC, "src", "*.c")):
        read |= set(re.findall(r'getenv\("(GFP_\w+)"\)', open(f).read()))
    man = open(os.path.join(tools.SRC, "doc", "gfpshim.7.in")).read()
    env = man.split(".SH ENVIRONMENT", 1)[1].split("\n.SH ", 1)[0]
    in_man = set(re.findall(r"^\.TP\n\.B ([A-Z_]+)$", env, re.M))
    check("doc/environment.md: the variables src/ reads", read and read <= listed,
          f"not in its table: {sorted(read - listed)}")
    check("doc/environment.md: the variables gfpshim(7) lists", in_man and in_man <= listed,
          f"not in its table: {sorted(in_man - listed)}")

    # A table row with an unescaped '|' in a cell (a code span's too, on
    # GitHub) has a cell more than its header: the table breaks.
    for path in md_files():
        cols = None
        for i, line in enumerate(prose(open(path, encoding="utf-8").read()), 1):
            if not line.startswith("|"):
                cols = None
                continue
            cells = len(re.split(r"(?<!\\)\|", line)) - 2
            if cols is None:
                cols = cells
            check(f"{rel(path)}:{i}: table row", cells == cols,
                  f"{cells} cells, its header {cols} (a '|' to escape?)")

    # What users have, the sources too: no internal design notes, no issue
    # numbers (the history is in git log). Code cites doc/design.md or the
    # kernel function it copies by name.
    banned = re.compile(r"\bSP" r"EC\b|kernel-" r"semantics|\u00a7|\b[Ii]ssues? \d+")
    scanned = [os.path.join(tools.SRC, "README.md")]
    for top in ("doc", "src", "preload", "tests", "tools"):
        for d, _, files in os.walk(os.path.join(tools.SRC, top)):
            if "corpus" in d:
                continue
            scanned += [os.path.join(d, f) for f in files]
    for path in scanned:
        try:
            lines = open(path, encoding="utf-8").readlines()
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(lines, 1):
            if banned.search(line):
                check(f"{rel(path)}:{i}", False, f"cites what users do not have: {line.strip()}")
    print(f"{len(tools.TOOLS)} tool pages, {len(listed)} variables, {len(scanned)} files scanned")


{"front": front, "links": links, "pages": pages}[sys.argv[1]]()
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
