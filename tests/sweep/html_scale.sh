#!/bin/bash
# The HTML page of a real program with hundreds of call sites (a sites-mode
# sweep of python3 that reaches 600 and more of them) stays usable: the
# chart has at most 40 bars, the rest in one that adds up to every run; the
# table holds every row the JSON calls for but lays out one page of 50;
# #page=2, a sorted page and the "next" button show the right fifty; the
# page writes the time it took to be ready (performance.now()) into
# <html data-ready-ms> (printed: how long is the machine's business). It
# says nothing on the console. HTML_SHOTS=DIR keeps its screenshots there.
source "$TESTS/lib.sh"
CHROMIUM=$(/usr/bin/python3 "$TESTS/sweep/html_driver.py" --which) || skip "see above"
PY=/usr/bin/python3 # not a pyenv shim script: a program the shim can run
[ -x "$PY" ] || skip "no $PY"
SWEEP=$BUILD/tools/gfp-sweep

# Sites mode tries every site's first hit first: 640 runs reach 640 sites.
"$SWEEP" --timeout 60 --max-runs 640 --json "$TMP/p.json" --html "$TMP/p.html" \
	-- "$PY" -c 'import json, email.parser' >"$TMP/p.txt" 2>&1
st=$?
[ "$st" = 0 ] || [ "$st" = 1 ] || { tail "$TMP/p.txt" >&2; fail "gfp-sweep exited $st"; }

PYTHONPATH=$TESTS/sweep /usr/bin/python3 - "$CHROMIUM" "$TMP" "${HTML_SHOTS:-}" <<'PY'
import json, re, sys
from html_driver import Page, ident, parse, shown_rows, table_rows, want_rows

chromium, tmp, shots = sys.argv[1:4]
run = json.load(open(f"{tmp}/p.json", encoding="utf-8"))
url = f"file://{tmp}/p.html"
sites = {r["site"] or r["injected_site"] for r in run["results"]}
if run["sites"] < 600 or len(sites) < 600:
    print(f"SKIP: python3 reached {run['sites']} call sites, its runs {len(sites)}: "
          "not the 600 this test is about", file=sys.stderr)
    sys.exit(77)
bad = []
want, _ = want_rows(run)
N = 50  # rows a page of the table shows

with Page(chromium, tmp) as page:
    page.load(url)
    ready = page.eval("document.documentElement.getAttribute('data-ready-ms')")
    elements = page.eval("document.getElementsByTagName('*').length")
    dom = parse(page.dom())
    chart = dom.one("div", cls="chart")
    bars = list(chart.all("div", cls="bar"))
    in_bars = sum(int(s.text()) for b in bars for s in b.all("span"))
    rest = [s.text() for s in chart.all("span", cls="rest")]
    if len(bars) > 40 or in_bars != run["runs"] or rest != [f"{len(sites) - 39} more sites"]:
        bad.append(f"{len(bars)} bars for {len(sites)} sites holding {in_bars} of "
                   f"{run['runs']} runs, the rest: {rest}")
    full = table_rows(page)
    laid = page.eval("[...document.querySelectorAll('#points tbody tr')]"
                     ".filter(tr => tr.getClientRects().length).length")
    pager = page.eval("[document.getElementById('pager').hidden, "
                      "document.querySelector('#pager span').textContent]")
    if ident(full) != want:
        bad.append(f"the table has {len(full)} rows, the JSON calls for {len(want)}")
    if ident(r for r in full if not r["hidden"]) != ident(full[:N]) or laid != N:
        bad.append(f"{laid} rows laid out, {sum(not r['hidden'] for r in full)} shown, not the "
                   f"first {N} of {len(full)}")
    if pager != [False, f"rows 1\u2013{N} of {len(full)}"]:
        bad.append(f"the pager: {pager}")

    page.load(url + "#page=2")
    if ident(shown_rows(page)) != ident(full[N:2 * N]):
        bad.append("#page=2 does not show the second page")
    page.load(url + "#sort=-runs&page=3")
    by_runs = sorted(full, key=lambda r: (-r["runs"], r["i"]))
    if ident(shown_rows(page)) != ident(by_runs[2 * N:3 * N]):
        bad.append("#sort=-runs&page=3 does not show the third page by runs")
    page.load(url)
    page.click("#pager button[data-step='1']")
    if page.eval("location.hash") != "#page=2" or ident(shown_rows(page)) != ident(full[N:2 * N]):
        bad.append(f"next: {page.eval('location.hash')!r} and not the second page")
    crash = sum(g["outcome"] == "crash" for g in run["findings"])
    page.load(url + "#outcome=crash")
    if len(shown_rows(page)) != crash:
        bad.append(f"#outcome=crash shows {len(shown_rows(page))} rows for {crash} findings")

    # How soon is the machine's business; that it gets there, the page's.
    if not ready or not ready.isdigit():
        bad.append(f"the page never said it was ready: {ready!r}")
    if shots:
        for width in (1200, 800):
            page.resize(width, 900)
            page.load(url)
            page.screenshot(f"{shots}/python3-{width}.png")
    if page.errors:
        bad.append("the page logged: " + "; ".join(page.errors))
print(f"# {len(sites)} sites, {run['runs']} runs: {len(bars)} bars, {len(full)} rows, "
      f"{elements} elements, ready in {ready} ms")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY
st=$?
[ "$st" = 0 ] || [ "$st" = 77 ] || fail "see above"
exit "$st"
