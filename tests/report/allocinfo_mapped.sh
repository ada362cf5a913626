#!/bin/bash
# gfp-report --allocinfo ends with one "#" line (readers of /proc/allocinfo's
# layout skip those) when a site of the report mapped memory itself: how
# many sites are marked mapped:yes and their live bytes summed, counted over
# all the report's rows, and how many of them --top leaves out; no line when
# no site mapped. map_prog pool maps from two threads, at three call sites.
# A report whose mapped rows carry hostile module names (control bytes, a
# newline, UTF-8, under a UTF-8 locale) and live bytes whose sum passes a
# long long still gives one line per row and the exact sum.
source "$TESTS/lib.sh"
REPORT=$BUILD/tools/gfp-report
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY

# check.py REPORT.json OUT TOP: OUT, gfp-report --allocinfo's output for
# REPORT.json with --top TOP (0: none), against the sums of the JSON rows.
cat >"$TMP/check.py" <<'PY'
import json, re, sys
rows = json.load(open(sys.argv[1], encoding="utf-8"))["allocinfo"]
out = open(sys.argv[2], "rb").read().decode("utf-8", "surrogateescape")
top = int(sys.argv[3])
bad = []
mapped = [r for r in rows if r.get("mapped") is True]
# The tool's order: live bytes, biggest first, the report's order among equals.
ranked = sorted(rows, key=lambda r: -r["live_bytes"])
shown = ranked[:top] if top else ranked
hidden = sum(1 for r in ranked[len(shown):] if r.get("mapped") is True)
if not out.endswith("\n"):
    bad.append("the output does not end with a newline")
lines = out[:-1].split("\n")
body = lines[2:]
want = []
if mapped:
    want = [f"# mapped:yes sites: {len(mapped)}, live bytes: "
            f"{sum(r['live_bytes'] for r in mapped)}"
            + (f", not shown by --top: {hidden}" if hidden else "")]
got = [l for l in body if l.startswith("#")]
if got != want:
    bad.append(f"summary {got!r}, expected {want!r}")
if want and body[-1:] != want:
    bad.append(f"the summary is not the last line: {body[-1:]!r}")
rowlines = [l for l in body if not l.startswith("#")]
if len(rowlines) != len(shown):
    bad.append(f"{len(rowlines)} row lines for {len(shown)} rows shown: {rowlines!r}")
marked = [l for l in rowlines if l.endswith(" mapped:yes ")]
if len(marked) != sum(1 for r in shown if r.get("mapped") is True):
    bad.append(f"{len(marked)} rows marked mapped:yes, {len(shown)} shown, {hidden} hidden")
if any(c < " " or "\x7f" <= c <= "\x9f" for c in "".join(lines)):
    bad.append(f"a control character reached the output: {out!r}")
if bad:
    sys.exit(f"FAIL {sys.argv[2]} (--top {top}): " + "\n  ".join(bad))
print(f"# {sys.argv[2]} --top {top}: {len(mapped)} mapped rows, {hidden} hidden: {want}")
PY
# show NAME REPORT.json TOP [ARGS...]: gfp-report --allocinfo, exit 0, checked.
show() {
	local name=$1 json=$2 top=$3 args=()
	shift 3
	[ "$top" = 0 ] || args=(--top "$top")
	"$REPORT" --allocinfo "$json" "${args[@]}" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	expect_eq "$name: exit status" 0 "$?"
	/usr/bin/python3 "$TMP/check.py" "$json" "$TMP/$name.out" "$top" || fail "$name: see above"
}

# Two threads map, grow, move and unmap; what they hold at the end is the
# mapped rows' live bytes.
rm -f "$TMP"/pool.*.json
bounded 120 env GFP_POLICY=stats=sites GFP_REPORT="$TMP/pool.%p.json" LD_PRELOAD="$SHIM" \
	"$BUILD/tests/preload/map_prog" pool 2 50 >"$TMP/pool.out" 2>"$TMP/pool.err" ||
	{ cat "$TMP/pool.err" >&2; fail "map_prog pool under stats=sites: exit $?"; }
cp "$TMP"/pool.*.json "$TMP/pool.json" || fail "no report of map_prog pool"
nmapped=$(/usr/bin/python3 - "$TMP/pool.json" "$TMP/pool.out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["allocinfo"]
held = json.loads(open(sys.argv[2]).read())["held"]
mapped = [r for r in rows if r.get("mapped") is True]
if sum(r["live_bytes"] for r in mapped) != held:
    sys.exit(f"FAIL: the mapped rows hold {sum(r['live_bytes'] for r in mapped)}, "
             f"map_prog {held}: {mapped}")
print(len(mapped))
PY
) || fail "map_prog pool's report: see above"
[ "$nmapped" -ge 2 ] || fail "map_prog pool: $nmapped mapped rows; --top cannot hide one"
nrows=$(/usr/bin/python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["allocinfo"]))' "$TMP/pool.json")

# All rows, --top as many as there are, --top 1 (a mapped row left out),
# and by live calls.
show all "$TMP/pool.json" 0
show top_all "$TMP/pool.json" "$nrows"
show top1 "$TMP/pool.json" 1
grep -q ', not shown by --top: [1-9]' "$TMP/top1.out" || fail "--top 1 hid no mapped row"
"$REPORT" --allocinfo "$TMP/pool.json" --sort calls >"$TMP/calls.out" 2>"$TMP/err"
expect_eq "--sort calls: exit status" 0 "$?"
expect_eq "--sort calls: the same summary" "$(tail -n 1 "$TMP/all.out")" \
	"$(tail -n 1 "$TMP/calls.out")"

# No site mapped: allocprog maps nothing itself; the pool's report with its
# rows unmarked, or marked with something else than true.
run_shim GFP_POLICY=stats=sites GFP_REPORT="$TMP/plain.json" "$BUILD/tests/report/allocprog" \
	>/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "allocprog under stats=sites: exit $?"; }
/usr/bin/python3 - "$TMP" <<'PY' || fail "could not write the unmarked reports"
import json, sys
tmp = sys.argv[1]
if any("mapped" in r for r in json.load(open(f"{tmp}/plain.json"))["allocinfo"]):
    sys.exit("FAIL: allocprog's report has a mapped row")
rep = json.load(open(f"{tmp}/pool.json"))
for i, r in enumerate(rep["allocinfo"]):
    if i % 2:
        r.pop("mapped", None)
    else:
        r["mapped"] = [False, "yes", 1, None][i // 2 % 4]
json.dump(rep, open(f"{tmp}/unmarked.json", "w"))
PY
show plain "$TMP/plain.json" 0
show unmarked "$TMP/unmarked.json" 0

# Hostile: the mapped rows' modules are control bytes, a newline and UTF-8
# (not found anywhere: module+offset), and two more mapped rows hold a long
# long's most each.
export LANG=C.UTF-8 LC_ALL=C.UTF-8
/usr/bin/python3 - "$TMP" <<'PY' || fail "could not write the hostile report"
import json, sys
tmp = sys.argv[1]
evil = "caf\u00e9\u001b]0;owned\u0007\u001b[2J\n\t\u009b31m\u007f\u202eend"
rep = json.load(open(f"{tmp}/pool.json"))
for r in rep["allocinfo"]:
    if r.get("mapped") is True:
        r["module"] = evil
        r.pop("path", None)
        r.pop("symbol", None)
most = 2**63 - 1
rep["allocinfo"] += [dict(rep["allocinfo"][0], module=evil + str(i), live_bytes=most,
                          peak_bytes=most, mapped=True) for i in range(2)]
json.dump(rep, open(f"{tmp}/evil.json", "w"), ensure_ascii=False)
PY
show evil "$TMP/evil.json" 0
show evil_top "$TMP/evil.json" 2
