#!/bin/bash
# One nth-mode sweep of the example with --json, --junit and --html: the JUnit
# testcases are the findings by title, and one for the rest; the HTML page
# opens in headless Chromium without a console message, its DOM holds the
# chart and every finding, and its screenshot is a rendered page (many
# colours, the crash bars' red among them), not a blank one.
source "$TESTS/lib.sh"
CHROMIUM=$(/usr/bin/python3 "$TESTS/sweep/html_driver.py" --which) || skip "see above"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/example/inventory
INPUT=$SRC/tests/example/inventory.txt

"$SWEEP" --timeout 5 --mode nth --json "$TMP/n.json" --junit "$TMP/n.xml" --html "$TMP/n.html" \
	-- "$PROG" "$INPUT" >"$TMP/n.txt" 2>&1
expect_eq "exit status with findings" 1 "$?"

/usr/bin/python3 - "$TMP" <<'PY' || fail "see above"
import json, re, sys
import xml.etree.ElementTree as ET
tmp = sys.argv[1]
run = json.load(open(f"{tmp}/n.json"))
s = ET.parse(f"{tmp}/n.xml").getroot().find("testsuite")
cases = s.findall("testcase")
titles = [f["title"] for f in run["findings"]] + ["failure points without a finding"]
bad = [(c.get("classname"), c.get("name")) for c in cases if c.get("classname") != "inventory"]
if [c.get("name") for c in cases] != titles or bad:
    sys.exit(f"FAIL: nth testcases {[c.get('name') for c in cases]}, the findings {titles}")
nfind = len(run["findings"])
if int(s.get("failures")) != nfind or len(s.findall("testcase/failure")) != nfind or not nfind:
    sys.exit(f"FAIL: failures={s.get('failures')}, {nfind} findings")
print(f"# nth: {len(cases)} testcases, {nfind} failures")
PY

# Chromium, offline and headless. --no-sandbox: the tests may run as root.
chrome() {
	bounded 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$TMP/chrome" --window-size=1200,900 \
		--enable-logging=stderr --v=0 "$@" "file://$TMP/n.html"
}
chrome --screenshot="$TMP/shot.png" >"$TMP/shot.out" 2>"$TMP/shot.err"
st=$?
[ "$st" = 0 ] && [ -s "$TMP/shot.png" ] ||
	{ tail -20 "$TMP/shot.err" >&2; fail "chromium exited $st without a screenshot"; }
if grep -E 'Uncaught|:CONSOLE' "$TMP/shot.err" >&2; then
	fail "the page logged to the console (above)"
fi
chrome --dump-dom >"$TMP/dom.html" 2>"$TMP/dom.err" ||
	{ tail -20 "$TMP/dom.err" >&2; fail "chromium could not dump the DOM"; }

/usr/bin/python3 - "$TMP" <<'PY' || fail "see above"
import json, re, struct, sys, zlib
tmp = sys.argv[1]
run = json.load(open(f"{tmp}/n.json"))
dom = open(f"{tmp}/dom.html", encoding="utf-8").read()
bad = []
arts = re.findall(r'<article class="finding (\w+)" id="f\d+">', dom)
if arts != [f["outcome"] for f in run["findings"]]:
    bad.append(f"the DOM has findings {arts}, the JSON {[f['outcome'] for f in run['findings']]}")
bars = len(re.findall(r'<div class="bar">', dom))
nsites = len({r["site"] or r["injected_site"] for r in run["results"]})
if bars != min(nsites, 40):  # past 40 sites, the rest share the 40th bar
    bad.append(f"{bars} bars in the chart for the {nsites} sites of {len(run['results'])} runs")

def pixels(path):
    """The RGB(A) rows of an 8-bit, non-interlaced PNG (what Chromium writes)."""
    d = open(path, "rb").read()
    if d[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("FAIL: the screenshot is not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(d):
        n, kind = struct.unpack(">I4s", d[pos:pos + 8])
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", d[pos + 8:pos + 8 + n])
        elif kind == b"IDAT":
            idat += d[pos + 8:pos + 8 + n]
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit(f"FAIL: unexpected PNG format {hdr}")
    bpp = 4 if ctype == 6 else 3
    raw, stride, i = zlib.decompress(idat), w * bpp, 0
    prev, rows = bytearray(stride), []
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride) if f else ():
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows

w, h, bpp, rows = pixels(f"{tmp}/shot.png")
colours, red = set(), 0
for row in rows:
    for x in range(0, len(row), bpp):
        px = row[x:x + 3]
        colours.add(px)
        red += abs(px[0] - 0xd8) + abs(px[1] - 0x3b) + abs(px[2] - 0x3b) < 24
if len(colours) <= 10:
    bad.append(f"the screenshot ({w}x{h}) is blank: {len(colours)} colours")
if red < 500:
    bad.append(f"no crash bar in the screenshot: {red} red pixels")
print(f"# screenshot {w}x{h}: {len(colours)} colours, {red} crash-red pixels; "
      f"{len(arts)} findings, {bars} bars in the DOM")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
