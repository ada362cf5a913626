#!/bin/bash
# Bad input exits 2 with one line naming the file and what is wrong: an
# unknown option, a missing or unreadable file, text that is not JSON, JSON
# of another kind, a bad line among records; merge refuses parts of
# different sweeps (mode, program, split), a shard twice or one missing.
# The JSON reader takes any spacing and key order.
source "$TESTS/lib.sh"
REPORT=$BUILD/tools/gfp-report

# expect_error WHAT PATTERN CMD...: exit 2, exactly one line on stderr
# (and a usage error's hint).
expect_error() {
	local what=$1 pat=$2
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	expect_eq "$what: exit status" 2 "$?"
	expect_eq "$what: lines on stderr" 1 "$(grep -cvx "try 'gfp-report --help'" "$TMP/err")"
	expect_contains "$what: message" "$TMP/err" "^gfp-report: error: .*$pat"
}

cat >"$TMP/ok.json" <<'J'
{"gfpshim":"0.1.0","pid":1,"totals":{"calls":2,"bytes":8,"failures":0},
 "entries":{"malloc":{"calls":2,"bytes":8,"failures":0}}}
J
printf '{"entries": {"malloc": {"calls": 3,}}}' >"$TMP/bad.json"
echo '{"hello":"world"}' >"$TMP/other.json"
: >"$TMP/empty.json"
cat >"$TMP/rec.jsonl" <<'J'
{"event":"injection","pid":1,"frames":[]}
{"event":"inj
{"event":"crash","pid":1,"frames":[]}
J

expect_error "unknown option" "unknown option '--frobnicate'" "$REPORT" --frobnicate "$TMP/ok.json"
expect_error "no file" "no FILE given" "$REPORT"
expect_error "--path not a directory" "--path $TMP/ok.json: not a directory" \
	"$REPORT" --path "$TMP/ok.json" "$TMP/ok.json"
expect_error "missing file" "cannot read $TMP/nosuch.json: No such file" \
	"$REPORT" "$TMP/nosuch.json"
expect_error "directory" "cannot read $TMP: Is a directory" "$REPORT" "$TMP"
expect_error "not JSON" "$TMP/bad.json: not JSON \(line 1, column 36: expected a key" \
	"$REPORT" "$TMP/bad.json"
expect_error "other JSON" "$TMP/other.json: JSON, but not a GFP_REPORT" "$REPORT" "$TMP/other.json"
expect_error "empty" "$TMP/empty.json is empty" "$REPORT" "$TMP/empty.json"
expect_error "bad record line" "$TMP/rec.jsonl: line 2, column" "$REPORT" "$TMP/rec.jsonl"
[ "$(grep -c '^injection\|^crash' "$TMP/out")" = 2 ] || fail "the good records were not printed"

# One bad file among good ones: the good ones still print.
"$REPORT" "$TMP/ok.json" "$TMP/nosuch.json" "$TMP/ok.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "mixed: exit status" 2 "$?"
expect_eq "mixed: both good files printed" 2 "$(grep -c '^  malloc  *2  *8  *0$' "$TMP/out")"

# merge: hand-written parts, spaced and ordered differently from gfp-sweep.
part() { # K N MODE ARG RESULTS GROUPS
	printf '{\n  "results": [%s],\n  "shard": "%s/%s", "mode": "%s",\n' "$5" "$1" "$2" "$3"
	printf '  "program": ["prog", "%s"],\n  "groups": [%s], "runs": 0,\n' "$4" "$6"
	printf '  "gfp_sweep": "0.1.0", "outcomes": {"ok": 9, "crash": 9}}\n'
}
R1='{"outcome":"ok","hit":1,"site":"aa"}, {"site":"bb","hit":1,"outcome":"crash"}'
R2='{"site":"aa","hit":2,"outcome":"crash"}'
G1='{"site":"bb","outcome":"crash","crash_site":"p+0x1","count":1,
     "policy":"fail.site=bb;fail.site.hit=1"}'
G2='{"count":1,"crash_site":"p+0x1","outcome":"crash","site":"bb",
     "policy":"fail.site=aa;fail.site.hit=2"}'
part 1 2 sites in "$R1" "$G1" >"$TMP/p1.json"
part 2 2 sites in "$R2" "$G2" >"$TMP/p2.json"
part 2 2 nth in "$R2" "" >"$TMP/p2nth.json"
part 2 2 sites other "$R2" "" >"$TMP/p2prog.json"
part 2 3 sites in "$R2" "" >"$TMP/p2of3.json"
"$REPORT" merge "$TMP/p2.json" "$TMP/p1.json" >"$TMP/m.json" 2>"$TMP/err" ||
	fail "merge of hand-written parts: $(cat "$TMP/err")"
/usr/bin/python3 - "$TMP/m.json" <<'PY' || fail "hand-written merge wrong"
import json, sys
m = json.load(open(sys.argv[1]))
order = [(r["site"], r["hit"]) for r in m["results"]]
assert order == [("aa", 1), ("aa", 2), ("bb", 1)], order
assert m["outcomes"] == {"ok": 1, "crash": 2}, m["outcomes"]
assert m["shard"] == "1/1" and m["runs"] == 3, m
g = m["groups"]
assert len(g) == 1 and g[0]["count"] == 2, g
# The group's first run in the merged order speaks for it: aa hit 2.
assert g[0]["policy"] == "fail.site=aa;fail.site.hit=2", g
PY
# A result of a gfp-sweep before findings (format 1) still prints: its groups.
"$REPORT" "$TMP/m.json" >"$TMP/out" 2>"$TMP/err" || fail "format 1 does not print: $(cat "$TMP/err")"
expect_contains "format 1: its group" "$TMP/out" '^\[1\] crash in 2 runs: allocation failure at site bb'

# Format 2: findings merge by outcome and key, their call paths by site,
# each renumbered to the merged results and led by the one that comes first.
part2() { # K RESULTS FINDINGS
	printf '{"gfp_sweep": "0.1.0", "format": 2, "mode": "sites", "program": ["prog", "in"],\n'
	printf ' "shard": "%s/2", "runs": 0, "outcomes": {"ok": 9, "crash": 9},\n' "$1"
	printf ' "results": [%s],\n "findings": [%s]}\n' "$2" "$3"
}
R1='{"site":"aa","hit":1,"outcome":"ok"}, {"site":"bb","hit":1,"outcome":"crash"},
    {"site":"cc","hit":1,"outcome":"crash"}'
R2='{"site":"aa","hit":2,"outcome":"crash"}, {"site":"bb","hit":2,"outcome":"crash"}'
F1='{"outcome":"crash","key":"crash SIGSEGV in f","count":2,"paths":2,"first_run":1,
     "policy":"fail.site=bb;fail.site.hit=1","call_paths":[
       {"site":"bb","count":1,"first_run":1,"reproducer":"bb 1"},
       {"site":"cc","count":1,"first_run":2,"reproducer":"cc 1"}]}'
F2='{"call_paths":[{"site":"aa","count":1,"first_run":0,"reproducer":"aa 2"},
       {"site":"bb","count":1,"first_run":1,"reproducer":"bb 2"}],
     "outcome":"crash","key":"crash SIGSEGV in f","count":2,"paths":2,"first_run":0,
     "policy":"fail.site=aa;fail.site.hit=2"},
    {"outcome":"crash","key":"crash SIGSEGV in g","count":0,"paths":0,"first_run":1,
     "call_paths":[]}'
part2 1 "$R1" "$F1" >"$TMP/f1.json"
part2 2 "$R2" "$F2" >"$TMP/f2.json"
"$REPORT" merge "$TMP/f1.json" "$TMP/f2.json" >"$TMP/fm.json" 2>"$TMP/err" ||
	fail "merge of format 2 parts: $(cat "$TMP/err")"
/usr/bin/python3 - "$TMP/fm.json" <<'PY' || fail "format 2 merge wrong"
import json, sys
m = json.load(open(sys.argv[1]))
order = [(r["site"], r["hit"]) for r in m["results"]]
assert order == [("aa", 1), ("aa", 2), ("bb", 1), ("bb", 2), ("cc", 1)], order
f = m["findings"]
assert [x["key"] for x in f] == ["crash SIGSEGV in f", "crash SIGSEGV in g"], f
f = f[0]
assert (f["count"], f["paths"], f["first_run"], f["policy"]) == \
    (4, 3, 1, "fail.site=aa;fail.site.hit=2"), f
paths = [(p["site"], p["count"], p["first_run"], p["reproducer"]) for p in f["call_paths"]]
assert paths == [("aa", 1, 1, "aa 2"), ("bb", 2, 2, "bb 1"), ("cc", 1, 4, "cc 1")], paths
PY
expect_error "merge: formats" "$TMP/p1.json has groups but $TMP/f2.json has findings" \
	"$REPORT" merge "$TMP/p1.json" "$TMP/f2.json"
expect_error "merge: modes" "$TMP/p2nth.json is a nth-mode sweep but $TMP/p1.json is sites-mode" \
	"$REPORT" merge "$TMP/p1.json" "$TMP/p2nth.json"
expect_error "merge: programs" "$TMP/p2prog.json swept a different program" \
	"$REPORT" merge "$TMP/p1.json" "$TMP/p2prog.json"
expect_error "merge: splits" "$TMP/p2of3.json is shard 2/3 but $TMP/p1.json is shard 1/2" \
	"$REPORT" merge "$TMP/p1.json" "$TMP/p2of3.json"
expect_error "merge: twice" "both shard 1/2" "$REPORT" merge "$TMP/p1.json" "$TMP/p1.json"
expect_error "merge: missing" "shard 2/2 is missing" "$REPORT" merge "$TMP/p1.json"
expect_error "merge: not a sweep" "$TMP/ok.json: not a gfp-sweep --json result" \
	"$REPORT" merge "$TMP/p1.json" "$TMP/ok.json"
expect_error "merge: unreadable" "cannot read $TMP/nosuch.json" \
	"$REPORT" merge "$TMP/p1.json" "$TMP/nosuch.json"
expect_error "merge: unknown option" "unknown option '--frobnicate'" "$REPORT" merge --frobnicate
expect_error "merge: unwritable" "cannot write $TMP/nodir/m.json" \
	"$REPORT" merge -o "$TMP/nodir/m.json" "$TMP/p1.json" "$TMP/p2.json"
