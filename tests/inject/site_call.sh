#!/bin/bash
# fail.site.call=N: a site's hit failed by its call number, as the recording
# run (stats=paths) counted it: that call alone is unwound, and fails only if
# its path is the site's. The recording gives each site's first, second and
# last call numbers in the initial thread (when only that thread hit it),
# and how many calls other threads made.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/inject/wrapprog

LD_PRELOAD=$SHIM GFP_POLICY='stats=paths' GFP_REPORT=$TMP/rec.json "$PROG" plain >"$TMP/plain.out" ||
	fail "the recording run failed"
LD_PRELOAD=$SHIM GFP_POLICY='stats=paths' GFP_REPORT=$TMP/threads.json "$PROG" threads \
	>/dev/null || fail "the threads recording failed"

run() { # POLICY NAME: the run's status, record and report
	rm -f "$TMP/$2.rec" "$TMP/$2.rep"
	LD_PRELOAD=$SHIM GFP_POLICY="$1" GFP_RECORD=$TMP/$2.rec GFP_REPORT=$TMP/$2.rep \
		"$PROG" plain >"$TMP/$2.out" 2>"$TMP/$2.err"
	echo $? >"$TMP/$2.status"
}

read -r SITE SECOND OTHER < <(/usr/bin/python3 - "$TMP/rec.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
# name_of's site (the first call; 4 hits through grab; a NULL exits 1) and
# a call number of another site
s = next(x for x in r["sites"] if x["first_thread_calls"][0] == 1)
o = next(x for x in r["sites"] if x["site"] != s["site"])
print(s["site"], s["first_thread_calls"][1], o["first_thread_calls"][0])
PY
)
[ -n "$SITE" ] || fail "no site in the recording"
run "fail.site=$SITE;fail.site.hit=2;stats=totals" byhit
run "fail.site=$SITE;fail.site.hit=2;fail.site.call=$SECOND;stats=totals" bycall
run "fail.site=$SITE;fail.site.hit=2;fail.site.call=$OTHER;stats=totals" elsewhere
run "fail.site=$SITE;fail.site.hit=2;fail.site.call=999999;stats=totals" never

/usr/bin/python3 - "$TMP" "$SITE" "$SECOND" <<'PY' || fail "see above"
import json, sys
tmp, site, second = sys.argv[1], sys.argv[2], int(sys.argv[3])
bad = []
rec = json.load(open(f"{tmp}/rec.json"))
if rec.get("other_thread_calls") != 0:
    bad.append(f"one thread, other_thread_calls {rec.get('other_thread_calls')}")
for s in rec["sites"]:
    f, sec, last = s["first_thread_calls"]
    if not (0 < f <= last) or (s["hits"] > 1 and not f < sec <= last) or f != s["first"]:
        bad.append(f"call numbers out of order: {s}")
# A second thread (and a detached one that only frees): its 21 calls are
# counted apart, its site has no initial thread's numbers, and the main
# thread's sites keep theirs.
thr = json.load(open(f"{tmp}/threads.json"))
if thr.get("other_thread_calls") != 21:
    bad.append(f"a second thread's 21 calls, other_thread_calls {thr.get('other_thread_calls')}")
mine = {s["site"]: s["first_thread_calls"] for s in rec["sites"]}
for s in thr["sites"]:
    if s["site"] not in mine and "first_thread_calls" in s:
        bad.append(f"the second thread's site has the initial thread's numbers: {s}")
    if s["site"] in mine and s.get("first_thread_calls") != mine[s["site"]]:
        bad.append(f"the main thread's numbers moved with a second thread: {s}, alone {mine[s['site']]}")

def injections(name):
    try:
        return [json.loads(l) for l in open(f"{tmp}/{name}.rec") if '"injection"' in l]
    except FileNotFoundError:
        return []
def unwinds(name):
    return json.load(open(f"{tmp}/{name}.rep"))["unwinds"]
def status(name):
    return int(open(f"{tmp}/{name}.status").read())

by_hit, by_call = injections("byhit"), injections("bycall")
if len(by_call) != 1 or by_call[0]["call"] != second or by_call[0]["site"] != site:
    bad.append(f"by call: injections {by_call}, expected one at call {second} of {site}")
if [(i["site"], i["call"], i["size"]) for i in by_hit] != [(i["site"], i["call"], i["size"]) for i in by_call]:
    bad.append(f"by hit and by call fail different calls: {by_hit} {by_call}")
if status("byhit") != status("bycall"):
    bad.append(f"status by hit {status('byhit')}, by call {status('bycall')}")
# Every call goes through grab: by hit, each one up to the hit is unwound.
if unwinds("bycall") != 1 or not unwinds("byhit") > 2:
    bad.append(f"unwinds: by call {unwinds('bycall')} (1 expected), by hit {unwinds('byhit')}")
for name in ("elsewhere", "never"):
    if injections(name) or status(name) != 0:
        bad.append(f"{name}: {injections(name)}, status {status(name)}: nothing should fail")
if unwinds("elsewhere") != 1 or unwinds("never") != 0:
    bad.append(f"unwinds: another path at the call {unwinds('elsewhere')}, never reached {unwinds('never')}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
cmp -s "$TMP/never.out" "$TMP/plain.out" || fail "a call number never reached changed the output"

# With a second thread allocating meanwhile, the main thread's hit is still
# found at its own call number: ten runs, each failing it once, in main.
for i in 1 2 3 4 5 6 7 8 9 10; do
	rm -f "$TMP/t.rec"
	LD_PRELOAD=$SHIM GFP_POLICY="fail.site=$SITE;fail.site.hit=2;fail.site.call=$SECOND" \
		GFP_RECORD=$TMP/t.rec "$PROG" threads >/dev/null 2>&1
	/usr/bin/python3 - "$TMP/t.rec" "$SITE" <<'PY' || fail "threads, run $i"
import json, sys
inj = [json.loads(l) for l in open(sys.argv[1]) if '"injection"' in l]
ok = len(inj) == 1 and inj[0]["site"] == sys.argv[2] and inj[0]["tid"] == inj[0]["pid"]
print("" if ok else f"injections {inj}")
sys.exit(0 if ok else 1)
PY
done

# Without fail.site: refused, naming the variable, the key and the fix.
LD_PRELOAD=$SHIM GFP_POLICY='fail.site.call=3' "$PROG" plain >/dev/null 2>"$TMP/err"
expect_eq "fail.site.call alone" 125 "$?"
expect_contains "the message" "$TMP/err" "GFP_POLICY: fail.site.call .* needs fail.site=ID"
exit 0
