#!/bin/bash
# The HTML page of a sites-mode sweep of the example, in headless Chromium
# (driven over its DevTools pipe: tests/sweep/html_driver.py), as people work
# with it: its table holds one row per finding (its call paths in it) and per
# site and other outcome, as the JSON says; a fragment (#outcome=crash, #sort=function,
# #function=...&module=...) loads it filtered and sorted, and clicking a
# column, a checkbox or typing a filter writes that fragment back, so the
# link shows the same rows; each finding lists its call paths with their
# reproducers; each finding's Copy button copies its reproducer (the
# JSON's), through the clipboard or, without one, by selecting it; a silent
# finding shows its evidence; without JavaScript every row is there; at 1200 and 800 pixels
# nothing runs off the page; and the page says nothing on the console.
# HTML_SHOTS=DIR keeps its screenshots there.
source "$TESTS/lib.sh"
CHROMIUM=$(/usr/bin/python3 "$TESTS/sweep/html_driver.py" --which) || skip "see above"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/example/inventory
INPUT=$SRC/tests/example/inventory.txt

"$SWEEP" --timeout 5 --json "$TMP/s.json" --html "$TMP/s.html" -- "$PROG" "$INPUT" >"$TMP/s.txt" 2>&1
expect_eq "exit status with findings" 1 "$?"

PYTHONPATH=$TESTS/sweep /usr/bin/python3 - "$CHROMIUM" "$TMP" "${HTML_SHOTS:-}" <<'PY' ||
import json, re, sys, time
from html_driver import ORDER, Page, ident, parse, shown_rows, table_rows, want_rows

chromium, tmp, shots = sys.argv[1:4]
run = json.load(open(f"{tmp}/s.json", encoding="utf-8"))
console = open(f"{tmp}/s.txt", encoding="utf-8", errors="replace").read()
url = f"file://{tmp}/s.html"
bad = []
results, findings = run["results"], run["findings"]
want, want_hits = want_rows(run)
rows, shown = table_rows, shown_rows


def fn_desc(rs):
    """By function, descending; equals in the page's order, no name last."""
    return (sorted([r for r in rs if r["fn"]], key=lambda r: r["fn"].lower(), reverse=True) +
            [r for r in rs if not r["fn"]])


with Page(chromium, tmp) as page:
    page.send("Browser.grantPermissions",
              {"permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}, session=False)
    page.load(url)
    full = rows(page)
    if ident(full) != want:
        bad.append(f"the table's rows {ident(full)}\n  the JSON's {want}")
    for r, h in zip(full, want_hits):
        if h is not None and r["hits"] != h:
            bad.append(f"row {ident([r])}: failure points {r['hits']!r}, the JSON's {h!r}")
    for k, f in enumerate(findings):
        points = re.findall(r": (?:hit|call) (\d+(?:, \d+)*)", full[k]["hits"])
        if not full[k]["hits"].startswith(f"{len(f['call_paths'])} call path") or \
                [len(x.split(", ")) for x in points] != \
                [min(p["count"], 12) for p in f["call_paths"]]:
            bad.append(f"finding {k + 1}: failure points {full[k]['hits']!r}, "
                       f"{len(f['call_paths'])} call paths of {f['count']} runs")
    if any(r["hidden"] for r in full) or not any(r["fn"] for r in full):
        bad.append("the unfiltered table hides rows or names no function")
    js = page.eval("document.getElementById('filters').hidden")
    if js is not False:
        bad.append("the script did not show the filters")

    def check(frag, expect, what):
        page.load(url + frag)
        got = shown(page)
        if ident(got) != ident(expect):
            bad.append(f"{frag} ({what}): rows {ident(got)}\n  expected {ident(expect)}")
        return got

    # Loaded in a state.
    crash = check("#outcome=crash", [r for r in full if r["o"] == "crash"], "crash rows")
    ncrash = sum(f["outcome"] == "crash" for f in findings)
    if len(crash) != ncrash or not ncrash:
        bad.append(f"#outcome=crash: {len(crash)} rows, {ncrash} crash findings in the JSON")
    text = page.eval("document.getElementById('shown').textContent")
    if text != f"{ncrash} of {len(full)} rows":
        bad.append(f"#outcome=crash: the count says {text!r}")
    fn_order = sorted(full, key=lambda r: (r["fn"] == "", r["fn"].lower(), r["i"]))
    check("#sort=function", fn_order, "by function")
    if page.eval("document.querySelector('th[data-sort=function]')"
                 ".getAttribute('aria-sort')") != "ascending":
        bad.append("#sort=function: its column is not marked sorted")
    base = lambda f: (re.match(r"(.*):(\d+)$", f) or re.match(r"(.*)()", f)).groups()
    file_order = sorted(full, key=lambda r: (r["file"] == "", base(r["file"])[0].lower(),
                                             int(base(r["file"])[1] or 0), r["i"]))
    check("#sort=file", file_order, "by file and line")
    check("#sort=-runs", sorted(full, key=lambda r: (-r["runs"], r["i"])), "most runs first")
    check("#sort=-function", fn_desc(full), "by function, descending")
    fn_has = lambda r, s: s in r["fn_text"].lower() or s in r["file"].lower()
    check("#function=BUILD_ROWS&module=invent",
          [r for r in full if fn_has(r, "build_rows") and "invent" in r["mod"].lower()],
          "function and module")
    check("#function=inventory.c%3A4&outcome=ok,handled&sort=runs",
          sorted([r for r in full if fn_has(r, "inventory.c:4") and r["o"] in ("ok", "handled")],
                 key=lambda r: (r["runs"], r["i"])), "file, outcomes, sorted")
    check("#module=no-such-module", [], "a module no row has")

    # Worked with: the state goes into the fragment, and back.
    page.load(url)
    steps = []
    page.click("th[data-sort=function] button")
    steps.append(page.eval("location.hash"))
    page.click("th[data-sort=function] button")
    steps.append(page.eval("location.hash"))
    page.click("label.o-crash input")
    steps.append(page.eval("location.hash"))
    page.type("input[name=function]", "build")
    steps.append(page.eval("location.hash"))
    chips = [o for o in ORDER if o != "crash" and any(r["o"] == o for r in full)]
    want_steps = ["#sort=function", "#sort=-function",
                  f"#outcome={','.join(chips)}&sort=-function",
                  f"#outcome={','.join(chips)}&function=build&sort=-function"]
    if steps != want_steps:
        bad.append(f"clicks and typing wrote {steps}, expected {want_steps}")
    worked = shown(page)
    expect = fn_desc([r for r in full if r["o"] != "crash" and fn_has(r, "build")])
    if ident(worked) != ident(expect) or not worked:
        bad.append(f"after the clicks: rows {ident(worked)}\n  expected {ident(expect)}")
    page.load(url + steps[-1])
    again = shown(page)
    state = page.eval("[document.querySelector('input[name=function]').value, "
                      "document.querySelector('label.o-crash input').checked]")
    if ident(again) != ident(worked) or state != ["build", False]:
        bad.append(f"the link {steps[-1]} shows {ident(again)}, controls {state}; "
                   f"the page it came from {ident(worked)}")
    page.click("#filters button[type=reset]")
    if page.eval("location.hash") != "" or len(shown(page)) != len(full):
        bad.append(f"Reset left {page.eval('location.hash')!r}, {len(shown(page))} rows")

    # Each finding: its reproducer, a Copy button, its evidence, its call
    # paths with theirs.
    dom = parse(page.dom())
    arts = list(dom.all("article", cls="finding"))
    if len(arts) != len(findings):
        bad.append(f"{len(arts)} findings on the page, {len(findings)} in the JSON")
    for k, (art, f) in enumerate(zip(arts, findings)):
        repro = next(art.all("div", cls="repro"))
        button = repro.one("button", cls="copy")
        if repro.one("pre").text() != f["reproducer"] or "hidden" in button.attrs:
            bad.append(f"finding {k + 1}: reproducer {repro.one('pre').text()!r}, the JSON's "
                       f"{f['reproducer']!r}; button {button.attrs}")
        table = art.one("table", cls="paths")
        got = [tr.one("pre").text() for tr in table.all("tr") if list(tr.all("pre"))]
        if got != [p["reproducer"] for p in f["call_paths"]]:
            bad.append(f"finding {k + 1}: call paths' reproducers {got}")
        evs = list(art.all("div", cls="evidence"))
        ev = f.get("evidence")
        if not ev:
            if evs:
                bad.append(f"finding {k + 1}: evidence on the page, none in the JSON")
            continue
        if len(evs) != 1:
            bad.append(f"finding {k + 1}: {len(evs)} evidence blocks for the JSON's {ev}")
            continue
        m = re.search(r"byte (\d+) \(line (\d+), column (\d+)\): the recording run wrote "
                      r"(\d+) bytes, this run (\d+)", evs[0].text())
        lines = evs[0].one("pre").text().split("\n")
        got = (tuple(map(int, m.groups())) if m else None, lines)
        exp = ((ev["offset"], ev["line"], ev["column"], ev["expected_bytes"],
                ev["actual_bytes"]), ["- " + ev["expected"], "+ " + ev["actual"]])
        if got != exp:
            bad.append(f"finding {k + 1}: evidence {got}, the JSON's {exp}")
    print(f"# {len(full)} rows, {len(arts)} findings, "
          f"{sum(bool(f.get('evidence')) for f in findings)} with evidence")

    # Copy: the clipboard, then (none there) the selection.
    for k, how in ((1, "clipboard"), (2, "selection")):
        if k > len(findings):
            break
        page.load(url)
        page.eval("navigator.clipboard.writeText('')")
        if how == "selection":
            page.eval("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
        page.click(f"#f{k} button.copy")
        time.sleep(0.2)
        label = page.eval(f"document.querySelector('#f{k} button.copy').textContent")
        got = page.eval("getSelection().toString()") if how == "selection" else \
            page.eval("navigator.clipboard.readText()")
        if got != findings[k - 1]["reproducer"] or label not in ("Copied",
                                                                  "Selected: press Ctrl+C"):
            bad.append(f"Copy of finding {k} ({how}): {got!r}, the button says {label!r}")

    # Widths; screenshots.
    for width in (1200, 800):
        page.resize(width, 900)
        page.load(url)
        over = page.eval("document.documentElement.scrollWidth")
        if over > width:
            bad.append(f"at {width} px the page is {over} px wide")
        if shots:
            page.screenshot(f"{shots}/example-{width}.png")

    # Without JavaScript: everything, nothing to click that does nothing.
    page.scripts(False)
    page.load(url + "#outcome=crash")
    nojs = rows(page)
    laid = page.eval("[...document.querySelectorAll('#points tbody tr')]"
                     ".filter(tr => tr.getClientRects().length).length")
    dead = page.eval("[...document.querySelectorAll('#filters, #pager, button.copy')]"
                     ".filter(e => e.getClientRects().length).length")
    if ident(nojs) != want or laid != len(want) or dead:
        bad.append(f"without JavaScript: {laid} of {len(nojs)} rows shown, {dead} controls")
    page.scripts(True)
    if page.errors:
        bad.append("the page logged: " + "; ".join(page.errors))
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
	fail "see above"
