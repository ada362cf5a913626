#!/bin/bash
# gfp-sweep on real Debian programs - sqlite3, jq, gzip and python3 -c - in
# sites mode: every sweep completes (exit 0 or 1), every run ran the program
# (no exit 125/126/127: a refused policy, a program that could not start),
# and no crash finding has a frame of the shim at the top of its crash
# backtrace: the crashes are the programs' own (python's "Fatal Python
# error", glibc's nss asserting, jq 1.6 calling an uninitialised
# out-of-memory handler), which the test prints. A program that is not
# installed is skipped; jq and python3 have hundreds of sites, so a
# --max-runs budget keeps them quick (every site's first hit comes first).
# jq's crash needs the junk filling: its printed reproducer, whose policy
# fills new blocks (junk=) as the sweep's did, segfaults again.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
printf '{"a": [1, 2, {"b": "x"}], "c": "text"}\n' >"$TMP/in.json"
seq 1 3000 >"$TMP/in.txt"
gzip -c "$TMP/in.txt" >"$TMP/in.gz" 2>/dev/null

swept=0
sweep() { # NAME MAX_RUNS PROG ARGS...
	local name=$1 max=$2
	shift 2
	if [ ! -x "$1" ]; then
		note "$name: $1 is not installed, not swept"
		return
	fi
	local t0=$SECONDS st
	"$SWEEP" -j 2 --timeout 20 --max-runs "$max" --json "$TMP/$name.json" -- "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
	st=$?
	if [ "$st" != 0 ] && [ "$st" != 1 ]; then
		cat "$TMP/$name.err" >&2
		fail "$name: gfp-sweep exited $st (0 or 1 expected)"
	fi
	note "$name: $(head -1 "$TMP/$name.out" | sed 's/^gfp-sweep: //'), $((SECONDS - t0)) s"
	swept=$((swept + 1))
}
sweep sqlite3 1000 /usr/bin/sqlite3 :memory: 'create table t(a); insert into t values(1),(2); select sum(a) from t;'
sweep jq 300 /usr/bin/jq .a "$TMP/in.json"
sweep gzip 1000 /usr/bin/gzip -c "$TMP/in.txt"
sweep gunzip 1000 /usr/bin/gzip -dc "$TMP/in.gz"
sweep python3 400 /usr/bin/python3 -c 'print(sum(range(10)))'
[ "$swept" -gt 0 ] || skip "none of sqlite3, jq, gzip, python3 is installed"

/usr/bin/python3 - "$TMP" sqlite3 jq gzip gunzip python3 <<'PY' || fail "see above"
import json, os, re, sys
tmp, names = sys.argv[1], sys.argv[2:]
SHIM = "libgfpshim.so"
bad = []

def modules(frames):
    return [f["module"] for f in frames]

def frame_text(f):
    return f"{f['symbol'] or f['function'] or ''} ({f['module']}+{f['offset']})"

for name in names:
    path = f"{tmp}/{name}.json"
    if not os.path.exists(path):
        continue
    r = json.load(open(path))
    res = r["results"]
    outcomes = {k: v for k, v in r["outcomes"].items() if v}
    print(f"# {name}: {r['eligible_calls']} eligible calls, {r['sites']} sites, {r['runs']} runs; "
          f"outcomes {outcomes}")
    if r["runs"] != len(res) or sum(r["outcomes"].values()) != len(res):
        bad.append(f"{name}: {r['runs']} runs, {len(res)} results, outcomes {r['outcomes']}")
    for x in res:
        if x["signal"] == 0 and x["status"] in (125, 126, 127):
            bad.append(f"{name}: a run did not run the program (exit {x['status']}): {x}")
            break
    # The findings, each with its call paths and runs.
    for g in r["findings"]:
        print(f"#   {g['title']}: {g['paths']} call paths, {g['count']} runs; e.g. {g['policy']}")
    for g in r["findings"]:
        mods = modules(g["crash_frames"])
        if SHIM in mods[:4]:
            bad.append(f"{name}: a crash in the shim (frames {mods[:4]}): reproduce with "
                       f"gfp-run --policy '{g['policy']}' -- {' '.join(r['program'])}\n"
                       + "\n".join(map(frame_text, g["crash_frames"])))
if bad:
    sys.exit("FAIL: " + "\n".join(bad))
PY

# jq 1.6 crashes only when its fresh memory is not zero: the printed
# reproducer carries the sweep's junk= and crashes again.
if [ -f "$TMP/jq.json" ]; then
	cmd=$(/usr/bin/python3 -c 'import json, sys
g = [g for g in json.load(open(sys.argv[1]))["findings"] if g["outcome"] == "crash" and g["signal"] == 11]
print(g[0]["reproducer"] if g else "")' "$TMP/jq.json")
	[ -n "$cmd" ] || fail "jq: no segfault finding"
	cmd=${cmd/ gfp-run / $GFP_RUN } # an installed gfp-run prints bare
	eval "$cmd" >/dev/null 2>&1
	st=$?
	[ "$st" = 139 ] || fail "jq: the reproducer '$cmd' exited $st, not by SIGSEGV"
	note "jq: the reproducer crashes again: $cmd"
fi
