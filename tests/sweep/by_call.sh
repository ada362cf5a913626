#!/bin/bash
# Runs by call number: a site only the initial thread reached, at the same
# of its calls in two recording runs, is failed at the hit's call number
# (fail.site.call), and the results equal a sweep by hit (--by-hit): on a
# program whose calls all go through one wrapper (alone, and with a second
# thread allocating meanwhile: its site goes by hit), on jq and on sqlite3.
# Runs that allocate differently keep the sweep by hit; a run that finds
# another path at its call number runs again by hit; reproducers count hits.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/inject/wrapprog
cd "$TMP" || fail "no TMP"

# No program here hangs: --timeout 120, not the default of ten times the
# recording run (at least 2 s), which a loaded machine can exceed and turn
# a run into a "hang" that the other sweep of the pair does not see.
sweep() { # NAME ARGS...: a sweep's JSON in NAME.json, its stderr in NAME.err
	local name=$1 t0=$SECONDS
	shift
	"$SWEEP" -j 2 --timeout 120 --json "$TMP/$name.json" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	local st=$?
	[ "$st" -le 1 ] || { cat "$TMP/$name.err" >&2; fail "$name: exit status $st"; }
	# where the time goes, for a log that ends in a timeout
	note "$name: $(grep -o '[0-9]* runs' "$TMP/$name.out" | head -1), $((SECONDS - t0)) s"
}

sweep plain -- "$PROG" plain
sweep plain_hit --by-hit -- "$PROG" plain
sweep threads -- "$PROG" threads
sweep threads_hit --by-hit -- "$PROG" threads
echo 0 >"$TMP/counter"
sweep counter -- "$PROG" counter "$TMP/counter"
sweep diverge -- "$PROG" diverge
# The real programs are most of the test's time: jq's start-up alone has
# about 500 sites, 1081 runs a sweep, 2 x 344 for sqlite3. They run without
# the junk fill (a quarter of their CPU time): it changes what memory holds,
# never which call a run fails, and both sweeps of a pair go without it.
printf '[{"id":%d,"name":"caf\\u00e9 \\u2603","tags":["a","b"]}]\n' 1 >"$TMP/in.json"
sweep jq --no-junk -- jq '.[0].name' "$TMP/in.json"
sweep jq_hit --no-junk --by-hit -- jq '.[0].name' "$TMP/in.json"
SQL='create table t(a, b); insert into t values(1, '"'"'x'"'"'); select * from t;'
sweep sqlite --no-junk -- sqlite3 :memory: "$SQL"
sweep sqlite_hit --no-junk --by-hit -- sqlite3 :memory: "$SQL"

/usr/bin/python3 - "$TMP" <<'PY' || fail "see above"
import json, re, sys
tmp = sys.argv[1]
bad = []
def load(name):
    return json.load(open(f"{tmp}/{name}.json"))
def points(run):
    return {(r["site"], r["hit"]): (r["outcome"], r["injected_site"], r["status"], r["signal"])
            for r in run["results"]}
def findings(run):
    return sorted((g["outcome"], g["key"], g["count"],
                   sorted((p["site"], p["count"]) for p in g["call_paths"]))
                  for g in run["findings"])

for by_call, by_hit in (("plain", "plain_hit"), ("threads", "threads_hit"), ("jq", "jq_hit"),
                       ("sqlite", "sqlite_hit")):
    c, h = load(by_call), load(by_hit)
    if c["by_call"] is not True or h["by_call"] is not False:
        bad.append(f"{by_call}: by_call {c['by_call']}, with --by-hit {h['by_call']}")
    if by_call == "threads":  # the second thread's sites (not plain's) by hit, the rest by call
        other = {r["site"] for r in c["results"]} - {r["site"] for r in load("plain")["results"]}
        wrong = [r for r in c["results"] if (r["call"] is None) != (r["site"] in other)]
        if wrong or not any(r["call"] is None for r in c["results"]):
            bad.append(f"threads: runs by hit and by call: {wrong[:3]}")
    elif not c["results"] or any(not r["call"] for r in c["results"]):
        bad.append(f"{by_call}: runs without a call number: "
                   f"{[r for r in c['results'] if not r['call']][:3]}")
    if any(r["call"] is not None for r in h["results"]):
        bad.append(f"{by_hit}: a run by call number")
    if points(c) != points(h) or findings(c) != findings(h):
        bad.append(f"{by_call}: results differ from --by-hit's:\n  {points(c)}\n  {points(h)}")
    for g in c["findings"]:
        if "fail.site.call" in g["reproducer"] or not g["confirmed"]:
            bad.append(f"{by_call}: reproducer {g['reproducer']!r}, confirmed {g['confirmed']}")

plain = load("plain")
if sorted(g["outcome"] for g in plain["findings"]) != ["crash", "silent"]:
    bad.append(f"wrapprog's findings: {findings(plain)}")
for name, why in (("counter", "no two runs alike"),):
    run = load(name)
    if run["by_call"] is not False or any(r["call"] is not None for r in run["results"]):
        bad.append(f"{name} ({why}): by_call {run['by_call']}")
# Every run by call number past the extra call met another path there and
# ran again by hit (only the start-up site's comes before it): the results
# are those of the program that does not diverge.
div = load("diverge")
note = re.search(r"(\d+) runs? found another call path", open(f"{tmp}/diverge.err").read())
again = [r for r in div["results"] if r["call"] is None]
if div["by_call"] is not True or not note or int(note[1]) != len(again) or \
        len(again) < len(div["results"]) - 1 or any(not r["startup"] for r in div["results"] if r["call"]):
    bad.append(f"diverge: by_call {div['by_call']}, note {note and note[0]}, "
               f"{len(again)} of {len(div['results'])} runs again by hit")
if points(div) != points(load("plain_hit")):
    bad.append(f"diverge: results {points(div)}\n  by hit {points(load('plain_hit'))}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
exit 0
