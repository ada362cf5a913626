#!/bin/bash
# A process that ends by _exit (dash, daemons, a program that skips its
# destructors) writes its GFP_REPORT as exit() would: alone, with a fork's
# child that _exits (which writes none: it read no configuration of its
# own), with a vfork's child whose exec failed, and with a detached thread
# still allocating. And gfp-sweep can sweep a shell command line.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/exitprog

for mode in plain fork vfork thread; do
	rm -rf "$TMP/$mode" && mkdir "$TMP/$mode"
	bounded 60 env LD_PRELOAD="$SHIM" GFP_POLICY=stats=totals \
		GFP_REPORT="$TMP/$mode/r.%p.json" "$PROG" $mode >"$TMP/$mode.out" ||
		fail "$mode: exit status $?"
	/usr/bin/python3 - "$TMP/$mode" "$(cat "$TMP/$mode.out")" "$mode" <<'PY' || fail "$mode: see above"
import glob, json, sys
d, pid, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files = glob.glob(f"{d}/r.*.json")
if [f"{d}/r.{pid}.json"] != files:
    print(f"{mode}: reports {files}, expected the parent's alone (pid {pid})")
    sys.exit(1)
r = json.load(open(files[0]))
if r["pid"] != pid or r["entries"]["malloc"]["calls"] < 50:
    print(f"{mode}: report of pid {r['pid']}, {r['entries'].get('malloc')}")
    sys.exit(1)
PY
done

# dash runs the last command of -c in a child and ends by _exit.
printf 'b\na\n' >"$TMP/f.txt"
"$BUILD/tools/gfp-sweep" --timeout 60 -j 2 --json "$TMP/sh.json" -- /bin/sh -c "sort $TMP/f.txt | head -1" \
	>"$TMP/sh.out" 2>"$TMP/sh.err" || { cat "$TMP/sh.err" >&2; fail "the sweep of sh -c failed"; }
/usr/bin/python3 - "$TMP/sh.json" <<'PY' || fail "see above"
import json, sys
r = json.load(open(sys.argv[1]))
if not (r["eligible_calls"] > 0 and r["sites"] > 0 and r["runs"] > 0):
    print(f"sh -c: {r['eligible_calls']} calls, {r['sites']} sites, {r['runs']} runs")
    sys.exit(1)
PY
exit 0
