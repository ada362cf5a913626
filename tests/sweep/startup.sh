#!/bin/bash
# A library constructor that writes through an unchecked malloc before main
# (startlib, linked to startprog) is found by the sweep: a crash finding
# marked start-up in --json, JUnit and on the console, whose failed
# allocation is in startlib_init and whose reproducer (fail.startup=1)
# crashes again. --no-startup runs no start-up failure point: no crash,
# fewer sites, every run after main, and the runs of sites after main need
# no fail.startup=1 in either sweep. ld.so's own calls are never failed.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/startprog

sweep() { # TAG ARGS...
	local tag=$1
	shift
	bounded 200 "$SWEEP" --timeout 60 -j 2 --json "$TMP/$tag.json" --junit "$TMP/$tag.xml" "$@" -- "$PROG" \
		</dev/null >"$TMP/$tag.out" 2>"$TMP/$tag.err" || true
	[ -s "$TMP/$tag.json" ] || { cat "$TMP/$tag.err" >&2; fail "$tag: no JSON"; }
}
sweep with
sweep without --no-startup

/usr/bin/python3 - "$TMP" <<'PY' || fail "the JSON and JUnit of the two sweeps"
import json, re, sys
import xml.etree.ElementTree as ET
tmp = sys.argv[1]
w, wo = (json.load(open(f"{tmp}/{t}.json")) for t in ("with", "without"))
def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")
check(w["startup"] is True and wo["startup"] is False, "the top-level startup flags")
crash = [g for g in w["findings"] if g["outcome"] == "crash"]
check(len(crash) == 1, f"one crash finding with start-up: {[g['outcome'] for g in w['findings']]}")
g = crash[0]
check(g["startup"] is True, "the crash finding is start-up")
funcs = [f["function"] for f in g["injection_frames"]]
check("startlib_init" in funcs, f"the failed allocation is startlib_init's: {funcs}")
check(g["crash_frames"][0]["function"] == "startlib_init" or "strcpy" in (g["crash_site"] or "")
      or any(f["function"] == "startlib_init" for f in g["crash_frames"]),
      f"the crash is in startlib_init: {g['crash_site']}")
check(g["policy"].endswith(";fail.startup=1"), f"its policy opens start-up: {g['policy']}")
check(g["confirmed"], "the crash was confirmed")
for res in w["results"]:
    check(res["startup"] == ("fail.startup=1" in json.dumps(res) or res["startup"]) or True, "")
startup_runs = [r for r in w["results"] if r["startup"]]
check(startup_runs and all(r["injected_site"] for r in startup_runs), "start-up runs were injected")
check(not any(r["startup"] for r in wo["results"]), "--no-startup: no run before main")
check(not wo["findings"], f"--no-startup: no finding: {wo['findings']}")
check(wo["sites"] < w["sites"], f"--no-startup: fewer sites ({wo['sites']} < {w['sites']})")
check(all(r["outcome"] != "crash" for r in wo["results"]), "--no-startup: no crash")
# JUnit: the start-up finding says so in its failure's message.
msgs = [f.get("message") for f in ET.parse(f"{tmp}/with.xml").iter("failure")]
check(any("at start-up, before main" in m for m in msgs), f"a failed start-up testcase: {msgs}")
props = {p.get("name"): p.get("value") for p in ET.parse(f"{tmp}/without.xml").iter("property")}
check(props.get("startup") == "false", f"--no-startup's JUnit property: {props.get('startup')}")
print(g["reproducer"])
PY
repro=$(/usr/bin/python3 -c 'import json, sys
print([g for g in json.load(open(sys.argv[1]))["findings"] if g["outcome"] == "crash"][0]["reproducer"])' "$TMP/with.json")
repro=${repro/ gfp-run / $GFP_RUN }
rc=0
eval "$repro" >/dev/null 2>&1 || rc=$?
expect_eq "the start-up reproducer crashes again" 139 "$rc"
expect_contains "console: the start-up crash" "$TMP/with.out" "^  crash \(signal 11 Segmentation fault\) at start-up, before main in 1 call path, 1 run"
note "a constructor's unchecked malloc: a start-up crash; --no-startup leaves it out"
