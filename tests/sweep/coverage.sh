#!/bin/bash
# --max-runs below the program's failure points still tries every call site.
# The recording run's report gives each site's first eligible call ("first",
# the number fail.nth counts). nth mode with a budget smaller than the
# eligible calls tries every site's first call, plus an even spread (a site
# that threads moved to another call number gets one run by its id), and
# still finds the example's planted crash, hang and silent loss; with fewer
# runs than sites it keeps that many first calls and says so. sites mode
# plans every site's first hit before any second or last hit, so a
# truncated plan still fails every site once. A finding's reproducer has
# --policy's keys before the failure point.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/example/inventory
INPUT=$SRC/tests/example/inventory.txt

# (counted as the sweep counts them: start-up calls too)
"$GFP_RUN" --policy 'stats=paths;fail.startup=1' --report "$TMP/rec.json" -- "$PROG" "$INPUT" >/dev/null ||
	fail "the recording run failed"
sweep() { # TAG ARGS...: a sweep of the example, its JSON in TAG.json, stderr in TAG.err
	local tag=$1
	shift
	"$SWEEP" --timeout 5 -j 2 --json "$TMP/$tag.json" "$@" -- "$PROG" "$INPUT" >"$TMP/$tag.out" 2>"$TMP/$tag.err"
	local st=$?
	[ "$st" = 0 ] || [ "$st" = 1 ] || { cat "$TMP/$tag.err" >&2; fail "$tag: exit status $st"; }
}
sweep nth40 --mode nth --max-runs 40
sweep nth20 --mode nth --max-runs 20
sweep sites40 --max-runs 40 --policy glibc_warn=1
sweep sites20 --max-runs 20
expect_contains "nth, 20 runs for more sites: a warning" "$TMP/nth20.err" \
	'call sites but --max-runs 20: only the first calls of 20 of them'
expect_contains "sites, 20 runs for more sites: a warning" "$TMP/sites20.err" \
	'call sites but --max-runs 20: [0-9]+ sites get no run'

/usr/bin/python3 - "$TMP" <<'PY' || fail "see above"
import json, re, sys
tmp = sys.argv[1]
load = lambda name: json.load(open(f"{tmp}/{name}.json"))
bad = []
rec = load("rec")
calls, sites = rec["eligible_calls"], rec["sites"]
ids = {s["site"] for s in sites}
firsts = [s.get("first") for s in sites]
if any(not isinstance(f, int) or not 1 <= f <= calls for f in firsts):
    bad.append(f"report: a site's first call is missing or outside 1..{calls}: {firsts}")
elif len(set(firsts)) != len(firsts):
    bad.append("report: two sites share a first call")
elif min(firsts) != 1:
    bad.append(f"report: the first eligible call is no site's first ({min(firsts)})")
if not 20 < len(ids) < 40 < calls:
    sys.exit(f"FAIL: the test needs 20 < sites < 40 < eligible calls, got {len(ids)} sites, "
             f"{calls} calls")

nth40 = load("nth40")
res = nth40["results"]
by_id = [r for r in res if r["site"]]
by_call = [r["hit"] for r in res if not r["site"]]
if len(by_call) != 40 or by_call != sorted(set(by_call)):
    bad.append(f"nth --max-runs 40: {len(by_call)} runs by call number, expected 40 in order")
if not all(r["hit"] == 1 for r in by_id):
    bad.append(f"nth: runs by site id are not first hits: {by_id}")
missed = ids - {r["injected_site"] for r in res}
if missed:
    bad.append(f"nth --max-runs 40: no run failed the sites {sorted(missed)}")
kinds = {f["outcome"] for f in nth40["findings"]}
for want in ("crash", "hang", "silent"):
    if want not in kinds:
        bad.append(f"nth --max-runs 40: no {want} finding (the planted bugs)")
print(f"# nth --max-runs 40: {len(res)} runs ({len(by_id)} by site id) failed "
      f"{len(ids - missed)} of {len(ids)} sites, {calls} calls; findings {sorted(kinds)}")

nth20 = load("nth20")
n20 = [r for r in nth20["results"] if not r["site"]]
if len(n20) != 20:
    bad.append(f"nth --max-runs 20: {len(n20)} runs by call number, expected 20")

for name, budget in (("sites40", 40), ("sites20", 20)):
    r = load(name)["results"]
    if len(r) != budget:
        bad.append(f"{name}: {len(r)} runs, expected {budget}")
    lead = r[:min(budget, len(ids))]
    if any(x["hit"] != 1 for x in lead) or len({x["site"] for x in lead}) != len(lead):
        bad.append(f"{name}: the plan does not start with one first hit per site: "
                   f"{[(x['site'], x['hit']) for x in lead]}")
    if budget > len(ids) and {x["site"] for x in r} != ids:
        bad.append(f"{name}: sites without a run: {sorted(ids - {x['site'] for x in r})}")
    if budget > len(ids) and any(x["hit"] == 1 for x in r[len(ids):]):
        bad.append(f"{name}: a first hit after the first {len(ids)} runs")
# A finding's policy and reproducer are the run's: the junk filling,
# --policy, then the point.
for g in load("sites40")["findings"]:
    if not g["policy"].startswith("junk=64K;glibc_warn=1;fail.site=") or \
            not re.match(r"(cd -- \S+ && )?\S*gfp-run --no-follow --policy "
                         + re.escape(f"'{g['policy']}' -- "), g["reproducer"]):
        bad.append(f"sites40: finding policy {g['policy']!r}, reproducer {g['reproducer']!r}")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
