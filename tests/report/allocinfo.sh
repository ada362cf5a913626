#!/bin/bash
# stats=sites counts per call site, like /proc/allocinfo, and exactly:
# allocprog's keep leaves 100 blocks of 1000 bytes live (usable 1024), temp
# frees all of its 1000 per call (main and 4 threads call it), each thread's
# handoff leaves 25 blocks of 3000 (usable 3072) that main frees half of
# after the join, and a strdup is its caller's site (main's, label's), not
# libc's; a realloc chain (moved, grown, shrunk), blocks too big for the
# shadow map's size entry, the 8-byte class and aligned blocks count their
# usable sizes and give them back exactly; what glibc frees after a thread
# has left the shim (strerror's text) leaves no live bytes. Three runs,
# the same numbers. gfp-report --allocinfo prints the rows in the kernel's
# layout (version line, header, "%12lli %8llu file:line [module] func:name")
# with each site's peak bytes as a column after the live bytes (an old
# report without them: the kernel's layout), by live bytes or --sort
# peak|calls, --top N only N, from any directory (the program is where the
# report says); a report without "allocinfo" exits 2 naming the file.
# stats=sites has no call-path counting; stats=paths has it (the "sites"
# array gfp-sweep plans from) and the allocinfo rows too.
source "$TESTS/lib.sh"
REPORT=$BUILD/tools/gfp-report
DIR=$BUILD/tests/report
PROG=$DIR/allocprog
line() { grep -n "SITE:$1" "$SRC/tests/report/allocprog.c" | cut -d: -f1; }
L_KEEP=$(line keep) L_TEMP=$(line temp) L_HAND=$(line handoff) L_DUP=$(line strdup)
L_LABEL=$(line label)
[ -n "$L_KEEP" ] && [ -n "$L_TEMP" ] && [ -n "$L_HAND" ] && [ -n "$L_DUP" ] && [ -n "$L_LABEL" ] &&
	[ "$(grep -c 'SITE:\(grow\|big\|tiny\|aligned\|unknown_error\|late_block\)' "$SRC/tests/report/allocprog.c")" = 6 ] ||
	fail "no SITE: markers in allocprog.c"

# check.py REPORT.json MODE: the rows of our sites, exact; MODE sites or paths.
cat >"$TMP/check.py" <<'PY'
import json, sys
rep, mode = json.load(open(sys.argv[1])), sys.argv[2]
bad = []
rows = rep.get("allocinfo")
if not isinstance(rows, list):
    sys.exit(f"FAIL: {mode}: no allocinfo array; keys {list(rep)}")
live = [r["live_bytes"] for r in rows]
if live != sorted(live, reverse=True):
    bad.append(f"rows not sorted by live bytes: {live}")
def one(what, pick):
    got = [r for r in rows if pick(r)]
    if len(got) != 1:
        bad.append(f"{what}: {len(got)} rows, expected 1: {got}")
        return None
    return got[0]
mine = lambda r: r["module"] == "allocprog"
want = {
    # name: (row, calls, bytes, live_calls, live_bytes)
    "keep": (one("keep", lambda r: r.get("symbol", "").startswith("keep+")),
             100, 100000, 100, 100 * 1024),
    "temp": (one("temp", lambda r: r.get("symbol", "").startswith("temp+")),
             5000, 500000, 0, 0),
    "handoff": (one("handoff", lambda r: r.get("symbol", "").startswith("handoff+")),
                100, 300000, 48, 48 * 3072),
    # main is not exported: the strdup row is the one of 15 bytes in allocprog.
    "strdup": (one("strdup", lambda r: mine(r) and r["bytes"] == 15), 1, 15, 1, 16),
    "label": (one("label", lambda r: r.get("symbol", "").startswith("label+")), 1, 6, 1, 8),
    "grow": (one("grow", lambda r: r.get("symbol", "").startswith("grow+")),
             6, 8 + 100 + 5000 + 70000 + 600000 + 40, 1, 48),
    "big": (one("big", lambda r: r.get("symbol", "").startswith("big+")),
            2, 1200000, 1, 655360),
    "tiny": (one("tiny", lambda r: r.get("symbol", "").startswith("tiny+")), 10, 50, 5, 40),
    "aligned": (one("aligned", lambda r: r.get("symbol", "").startswith("aligned+")),
                10, 1000, 5, 5 * 128),
    "late_block": (one("late_block", lambda r: r.get("symbol", "").startswith("late_block+")),
                   4, 16000, 0, 0),
}
# glibc's own calls for strerror's text: their number is glibc's affair.
r = one("unknown_error", lambda r: r.get("symbol", "").startswith("unknown_error+"))
if r and (r["calls"] < 4 or r["live_calls"] or r["live_bytes"]):
    bad.append(f"unknown_error: {r['calls']} calls (4 or more expected) with "
               f"{r['live_calls']} live calls, {r['live_bytes']} live bytes (0 expected)")
for name, (r, calls, nbytes, lcalls, lbytes) in want.items():
    if r is None:
        continue
    got = (r["calls"], r["bytes"], r["live_calls"], r["live_bytes"], r["failures"],
           r["injections"], r["retries"])
    exp = (calls, nbytes, lcalls, lbytes, 0, 0, 0)
    if got != exp or not mine(r) or not r["offset"].startswith("0x"):
        bad.append(f"{name}: (calls, bytes, live_calls, live_bytes, failures, injections, "
                   f"retries) {got}, expected {exp}; row {r}")
if mode == "sites":
    extra = [k for k in ("sites", "eligible_calls", "sites_overflow") if k in rep]
    if extra:
        bad.append(f"stats=sites reports call paths too: {extra}")
else:
    paths = rep.get("sites")
    if not isinstance(paths, list) or not paths:
        bad.append("stats=paths: no sites array")
    else:
        hits = sorted(p["hits"] for p in paths)
        if sum(hits) != rep.get("eligible_calls") or rep.get("sites_overflow") != 0:
            bad.append(f"stats=paths: hits {hits} do not add up to the eligible calls "
                       f"{rep.get('eligible_calls')}")
        # temp from the threads and from main, keep, handoff, strdup.
        for h in (4000, 1000, 100, 1):
            if h not in hits:
                bad.append(f"stats=paths: no path with {h} hits: {hits}")
        if hits.count(100) != 2:
            bad.append(f"stats=paths: keep and handoff are not two paths of 100: {hits}")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY

for run in 1 2 3; do
	run_shim GFP_POLICY=stats=sites GFP_REPORT="$TMP/sites.json" "$PROG" >"$TMP/out" 2>"$TMP/err" ||
		{ cat "$TMP/err" >&2; fail "allocprog under stats=sites, run $run: exit $?"; }
	expect_contains "usable sizes, run $run" "$TMP/out" '^usable keep 1024 handoff 3072 strdup 16 grow 48 big 655360 tiny 8 aligned 128$'
	/usr/bin/python3 "$TMP/check.py" "$TMP/sites.json" sites || fail "stats=sites, run $run: see above"
done
run_shim GFP_POLICY=stats=paths GFP_REPORT="$TMP/paths.json" "$PROG" >/dev/null 2>"$TMP/err" ||
	{ cat "$TMP/err" >&2; fail "allocprog under stats=paths: exit $?"; }
/usr/bin/python3 "$TMP/check.py" "$TMP/paths.json" paths || fail "stats=paths: see above"

# The default view points to --allocinfo, and has no call paths for stats=sites.
"$REPORT" "$TMP/sites.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "table exit status" 0 "$?"
expect_contains "table: the allocinfo note" "$TMP/out" \
	'^[0-9]+ allocation sites with statistics: gfp-report --allocinfo .*sites\.json prints them$'
grep -q '^call paths' "$TMP/out" && fail "stats=sites report shows call paths"

# --allocinfo: the kernel's layout with a peak column, symbolized from
# allocprog's debug information.
"$REPORT" --path "$DIR" --allocinfo "$TMP/sites.json" >"$TMP/ai" 2>"$TMP/err"
expect_eq "--allocinfo exit status" 0 "$?"
expect_eq "version line" "allocinfo - version: 1.0" "$(sed -n 1p "$TMP/ai")"
expect_eq "header" "#     <size>       <peak>  <calls> <tag info>" "$(sed -n 2p "$TMP/ai")"
nrows=$(/usr/bin/python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["allocinfo"]))' "$TMP/sites.json")
expect_eq "one line per site" "$nrows" "$(($(wc -l <"$TMP/ai") - 2))"
tail -n +3 "$TMP/ai" | grep -Ev '^[ 0-9-]{11}[0-9] [ 0-9-]{11}[0-9] [ 0-9]{7}[0-9] [^ ]+ \[[^] ]+\] func:[^ ]+ $' >"$TMP/odd"
[ -s "$TMP/odd" ] && fail "lines not in the layout '%12lli %12lli %8llu tag [module] func:name ': $(cat "$TMP/odd")"
tail -n +3 "$TMP/ai" | awk '{ print $1 }' | sort -rn -c || fail "lines not sorted by live bytes"
row() { printf '^ *%s +[0-9]+ +%s allocprog\\.c:%s \\[allocprog\\] func:%s $' "$@"; }
for want in "$(row 147456 48 "$L_HAND" handoff)" "$(row 102400 100 "$L_KEEP" keep)" \
	"$(row 16 1 "$L_DUP" main)" "$(row 8 1 "$L_LABEL" label)" "$(row 0 0 "$L_TEMP" temp)"; do
	expect_contains "a row" "$TMP/ai" "$want"
done

# A report from a shim before "peak_bytes" and "modules" (the same report
# without them): the kernel's own layout, and no --sort peak.
/usr/bin/python3 - "$TMP/sites.json" "$TMP/old.json" <<'PY' || fail "cannot write old.json"
import json, sys
rep = json.load(open(sys.argv[1]))
rep.pop("modules", None)
for r in rep["allocinfo"]:
    r.pop("peak_bytes", None)
json.dump(rep, open(sys.argv[2], "w"))
PY
"$REPORT" --path "$DIR" --allocinfo "$TMP/old.json" >"$TMP/old" 2>"$TMP/err"
expect_eq "old report: exit status" 0 "$?"
expect_eq "old report: header" "#     <size>  <calls> <tag info>" "$(sed -n 2p "$TMP/old")"
tail -n +3 "$TMP/old" | grep -Ev '^[ 0-9-]{11}[0-9] [ 0-9]{7}[0-9] [^ ]+ \[[^] ]+\] func:[^ ]+ $' >"$TMP/odd"
[ -s "$TMP/odd" ] && fail "old report: lines not in the kernel's layout: $(cat "$TMP/odd")"
expect_eq "old report: the same rows without the peak column" \
	"$(tail -n +3 "$TMP/ai" | awk '{ for (i = 2; i < NF; i++) $i = $(i + 1); NF--; print }')" \
	"$(tail -n +3 "$TMP/old" | awk '{ $1 = $1; print }')"
"$REPORT" --allocinfo "$TMP/old.json" --sort peak >"$TMP/out" 2>"$TMP/err"
expect_eq "old report, --sort peak: exit status" 2 "$?"
expect_contains "old report, --sort peak: says why" "$TMP/err" \
	'^gfp-report: error: .*old\.json: --sort peak, but its allocinfo rows have no "peak_bytes"'

"$REPORT" --path "$DIR" --allocinfo "$TMP/sites.json" --top 1 >"$TMP/top" 2>"$TMP/err"
expect_eq "--top 1 exit status" 0 "$?"
expect_eq "--top 1: version, header and one row" "$(head -3 "$TMP/ai")" "$(cat "$TMP/top")"

# From another directory: the program is found at the path the report
# names, its rows named as from the build directory.
(cd / && "$REPORT" --allocinfo "$TMP/sites.json") >"$TMP/ai_root" 2>"$TMP/err"
expect_eq "--allocinfo from /: exit status" 0 "$?"
expect_eq "--allocinfo from /: the same rows" "$(cat "$TMP/ai")" "$(cat "$TMP/ai_root")"

# Not found (the program is gone from its path): module+offset and the
# name the shim recorded.
mkdir "$TMP/gone"
cp "$PROG" "$TMP/gone/allocprog"
run_shim GFP_POLICY=stats=sites GFP_REPORT="$TMP/gone.json" "$TMP/gone/allocprog" >/dev/null 2>&1 ||
	fail "allocprog copy under stats=sites failed"
rm "$TMP/gone/allocprog"
(cd "$TMP" && "$REPORT" --allocinfo "$TMP/gone.json") >"$TMP/ai" 2>"$TMP/err"
expect_eq "module not found: exit status" 0 "$?"
expect_contains "module not found: module+offset, recorded name" "$TMP/ai" \
	'^      102400       102400      100 allocprog\+0x[0-9a-f]+ \[allocprog\] func:keep $'
expect_contains "module not found: the name the shim recorded (its symbol table)" "$TMP/ai" \
	'^          16           16        1 allocprog\+0x[0-9a-f]+ \[allocprog\] func:main $'
expect_contains "module not found: a note" "$TMP/err" '^gfp-report: note: allocprog not found'

# --sort live|peak|calls: the rows by that column, biggest first, the
# report's order among equals; the columns are the report's numbers, peak
# after live bytes ("peak_bytes", the most a site had live at once).
for sort in live peak calls; do
	"$REPORT" --allocinfo "$TMP/sites.json" --sort "$sort" >"$TMP/sorted" 2>"$TMP/err"
	expect_eq "--sort $sort: exit status" 0 "$?"
	/usr/bin/python3 - "$TMP/sites.json" "$TMP/sorted" "$sort" <<'PY' || fail "--sort $sort: see above"
import json, sys
rows = json.load(open(sys.argv[1]))["allocinfo"]
lines = open(sys.argv[2]).read().splitlines()
sort = sys.argv[3]
bad = []
if lines[1].split() != ["#", "<size>", "<peak>", "<calls>", "<tag", "info>"]:
    bad.append(f"header {lines[1]!r}")
got = [tuple(int(x) for x in l.split()[:3]) for l in lines[2:]]
key = {"live": "live_bytes", "peak": "peak_bytes", "calls": "live_calls"}[sort]
want = [(r["live_bytes"], r["peak_bytes"], r["live_calls"])
        for r in sorted(rows, key=lambda r: -r[key])]
if got != want:
    bad.append(f"rows (live, peak, calls) {got},\n  expected {want}")
keep = [r for r in rows if r.get("symbol", "").startswith("keep+")]
if len(keep) != 1 or keep[0]["peak_bytes"] != 100 * 1024:
    bad.append(f"keep's peak_bytes is not its 100 live blocks of 1024: {keep}")
if any(r["peak_bytes"] < r["live_bytes"] for r in rows):
    bad.append("a row's peak_bytes is below its live_bytes")
if bad:
    sys.exit("FAIL: " + "\n".join(bad))
PY
done

# Errors: a report without allocinfo, a bad --top, --top alone, two files.
run_shim GFP_POLICY=stats=totals GFP_REPORT="$TMP/totals.json" "$PROG" >/dev/null ||
	fail "allocprog under stats=totals failed"
"$REPORT" --allocinfo "$TMP/totals.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "no allocinfo: exit status" 2 "$?"
expect_contains "no allocinfo: names the file and the key" "$TMP/err" \
	'^gfp-report: error: .*/totals\.json has no "allocinfo": the process ran with stats=totals; .*stats=sites'
[ -s "$TMP/out" ] && fail "no allocinfo: something on stdout: $(cat "$TMP/out")"
for args in "--allocinfo $TMP/sites.json --top 0" "--allocinfo $TMP/sites.json --top x" \
	"--top 1 $TMP/sites.json" "--allocinfo $TMP/sites.json $TMP/paths.json" \
	"--allocinfo $TMP/nosuch.json" "--allocinfo $TMP/sites.json --sort size" \
	"--sort live $TMP/sites.json"; do
	# shellcheck disable=SC2086
	"$REPORT" $args >/dev/null 2>"$TMP/err"
	expect_eq "gfp-report $args: exit status" 2 "$?"
	expect_contains "gfp-report $args: one error" "$TMP/err" '^gfp-report: error: '
done
