#!/bin/bash
# One sites-mode sweep of the example with --json, --junit and --html, its
# input file named with every character the reports must escape (& < > " '
# ]]> and a byte that is not UTF-8): the JUnit report validates (xmllint,
# against tests/sweep/junit.xsd) with one failing testcase per finding and
# one passing for the rest; the HTML page is UTF-8, fetches nothing, shows
# every finding with both backtraces, and its reproducers are exactly the
# terminal's - one of them, run as printed, crashes again.
source "$TESTS/lib.sh"
need_prog xmllint
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/example/inventory
INPUT=$TMP/$(printf 'in &<>"'"'"'\377 ]]>.txt')
cp "$SRC/tests/example/inventory.txt" "$INPUT" || fail "cannot copy the input"

"$SWEEP" --timeout 5 --json "$TMP/r.json" --junit "$TMP/r.xml" --html "$TMP/r.html" -- "$PROG" "$INPUT" \
	>"$TMP/r.txt" 2>&1
expect_eq "exit status with findings" 1 "$?"

xmllint --noout "$TMP/r.xml" || fail "the JUnit report is not well-formed XML"
xmllint --noout --schema "$TESTS/sweep/junit.xsd" "$TMP/r.xml" 2>"$TMP/xsd.txt" ||
	{ cat "$TMP/xsd.txt" >&2; fail "the JUnit report does not match the JUnit schema"; }

/usr/bin/python3 - "$TMP" "$PROG" <<'PY' || fail "see above"
import html, json, re, sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

tmp, prog = sys.argv[1:3]
bad = []
run = json.load(open(f"{tmp}/r.json", encoding="utf-8"))
results = run["results"]
weird = '&<>"\\\'\\xff ]]>.txt'  # the input's name as $'...' spells it

# JUnit: one suite, a testcase per finding in order, failures = findings,
# and one passing testcase for the rest.
fs = run["findings"]
root = ET.parse(f"{tmp}/r.xml").getroot()
suites = root.findall("testsuite")
if root.tag != "testsuites" or len(suites) != 1:
    sys.exit(f"FAIL: expected <testsuites> with one <testsuite>, got {root.tag}, {len(suites)}")
s = suites[0]
cases = s.findall("testcase")
n = lambda k: int(s.get(k, "-1"))
if s.get("name") != f"gfp-sweep {prog}":
    bad.append(f"testsuite name {s.get('name')!r}")
if not (n("tests") == len(cases) == len(fs) + 1) or not fs:
    bad.append(f"tests={n('tests')}, {len(cases)} testcases, {len(fs)} findings")
if not (n("failures") == len(fs) == len(s.findall("testcase/failure"))):
    bad.append(f"failures={n('failures')}, {len(s.findall('testcase/failure'))} <failure>, "
               f"{len(fs)} findings")
if n("skipped") != 0 or n("errors") != 0:
    bad.append(f"skipped={n('skipped')} errors={n('errors')}")
rest = cases[-1] if cases else None
if rest is None or rest.find("failure") is not None or \
        rest.get("name") != "failure points without a finding":
    bad.append(f"the last testcase {rest is not None and rest.attrib} is not the passing one")
for case, fd in zip(cases, fs):
    want = (prog.rsplit("/", 1)[-1], fd["title"])
    if (case.get("classname"), case.get("name")) != want:
        bad.append(f"testcase {case.attrib} for finding {want}")
        break
    f = case.find("failure")
    if f is None:
        bad.append(f"testcase {want}: no failure")
        break
    text, msg = f.text or "", f.get("message", "")
    if f.get("type") != fd["outcome"] or not msg.startswith(fd["outcome"]):
        bad.append(f"{want}: failure type {f.get('type')!r} message {msg!r}")
    paths = f"{fd['paths']} call path{'s' if fd['paths'] != 1 else ''}, {fd['count']} run"
    if fd["outcome"] == "crash" and not msg.startswith(f"crash (signal {fd['signal']}) in {paths}"):
        bad.append(f"{want}: crash message {msg!r}")
    for part in ("the failed allocation:\n", weird):
        if part not in text:
            bad.append(f"{want}: no {part!r} in the failure text")
    if not re.search(r"reproduce \(confirmed\): (cd -- \S+ && )?\S*gfp-run --no-follow --policy 'junk=64K;", text):
        bad.append(f"{want}: no reproducer in the failure text")
    if fd["outcome"] == "crash" and "the crash:\n" not in text:
        bad.append(f"{want}: a crash without its backtrace")
    if not re.search(r"inventory\.c:\d+", text):
        bad.append(f"{want}: no source lines in the failure text")
prop = {p.get("name"): p.get("value") for p in s.iter("property")}
if weird not in prop.get("program", ""):
    bad.append(f"program property {prop.get('program')!r} lost the input's name")

# HTML: strict UTF-8, nothing fetched, every group with its backtraces.
raw = open(f"{tmp}/r.html", "rb").read().decode("utf-8")

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.fetches, self.tags = [], []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if tag in ("img", "iframe", "object", "embed", "video", "audio", "source") or "src" in a:
            self.fetches.append((tag, a))
        href = a.get("href")
        if href is not None and not (href.startswith("#") or href.startswith("data:")):
            self.fetches.append((tag, a))

page = Page()
page.feed(raw)
page.close()
if page.fetches or re.search(r"https?:|@import|url\(", raw):
    bad.append(f"the page fetches something: {page.fetches}")
for tag in ("html", "head", "style", "body", "h1", "table", "article", "pre"):
    if tag not in page.tags:
        bad.append(f"no <{tag}> in the page")
if '&<>"' in raw or "]]>" in raw:
    bad.append("unescaped input name in the page")
text = html.unescape(raw)
arts = re.findall(r'<article class="finding (\w+)" id="f(\d+)">(.*?)</article>', raw, re.S)
if [(o, int(i)) for o, i, _ in arts] != [(f["outcome"], k + 1) for k, f in enumerate(fs)]:
    bad.append(f"findings in the page {[(o, i) for o, i, _ in arts]}, in the JSON "
               f"{[f['outcome'] for f in fs]}")
term = re.findall(r"reproduce \(confirmed\): (.*)", open(f"{tmp}/r.txt", "rb").read()
                  .decode("utf-8"))
page_repro = []
for (o, i, body), fd in zip(arts, fs):
    pres = re.findall(r"<pre>(.*?)</pre>", body, re.S)
    frames = 2 if fd["crash_frames"] else 1
    # the backtraces, the reproducer, then each call path's
    if len(pres) != frames + 1 + fd["paths"]:
        bad.append(f"finding {i}: {len(pres)} <pre>, expected the backtraces, the "
                   f"reproducer and {fd['paths']} of the call paths")
        continue
    if not re.search(r"inventory\.c:\d+", html.unescape(re.sub(r"<[^>]+>", "", pres[0]))):
        bad.append(f"finding {i}: no source lines in the failed allocation")
    page_repro.append(html.unescape(pres[frames]))
    if o == "crash" and not re.search(r"inventory\.c:\d+", html.unescape(pres[1])):
        bad.append(f"finding {i}: no source lines in the crash")
    paths = [html.unescape(p) for p in pres[frames + 1:]]
    if paths != [p["reproducer"] for p in fd["call_paths"]] or paths[0] != page_repro[-1]:
        bad.append(f"finding {i}: the call paths' reproducers {paths} are not the JSON's")
if page_repro != term or weird not in "".join(page_repro):
    bad.append(f"reproducers in the page {page_repro}\n  differ from the terminal's {term}")
for res in results:
    if f"<code>{res['site']}</code>" not in raw:
        bad.append(f"site {res['site']} has no bar in the chart")
        break
crash = [r for (o, _, _), r in zip(arts, page_repro) if o == "crash"]
open(f"{tmp}/repro.sh", "w", encoding="utf-8").write(crash[0] if crash else "")
print(f"# {len(cases)} testcases, {len(fs)} failures, {len(arts)} findings in the page")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY

# The reproducer as the page shows it (input name included) crashes again.
cmd=$(cat "$TMP/repro.sh")
[ -n "$cmd" ] || fail "no crash finding in the page"
cmd=${cmd/ gfp-run / $GFP_RUN } # an installed gfp-run prints bare
eval "$cmd" >/dev/null 2>&1
st=$?
[ "$st" -gt 128 ] || fail "reproducer '$cmd' from the page exited $st, not by a signal"
