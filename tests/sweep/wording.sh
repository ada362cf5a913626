#!/bin/bash
# The header counts in words that agree with their numbers: "1 eligible
# call at 1 call site", "2 eligible calls" (the numbers from --json). A
# program named by a path that is not there (a missing file, a dangling
# symlink) is "no such file or directory", as a shell says, not "command
# not found", which a bare name not on PATH still is; exit status 127.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
cd "$TMP" || fail "cd"

# header PROG ARGS...: checks the header line against the JSON's counts.
singular=0
header() {
	bounded 120 "$SWEEP" -j 1 --json "$TMP/h.json" -- "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "$1: exit status $rc: $(tail -3 "$TMP/err")"
	local want
	want=$(/usr/bin/python3 - "$TMP/h.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e, s = d["eligible_calls"], d["sites"]
s = len(s) if isinstance(s, list) else s
print(f"{e} eligible call{'' if e == 1 else 's'} at {s} call site{'' if s == 1 else 's'};")
print(1 if e == 1 or s == 1 else 0)
PY
	) || fail "$1: the JSON"
	grep -qF -- ": ${want%$'\n'*}" "$TMP/out" ||
		fail "$1: the header is not '${want%$'\n'*}': $(head -1 "$TMP/out")"
	singular=$((singular + ${want##*$'\n'}))
}
header /bin/true
header "$BUILD/tests/sweep/hangprog" twocalls
[ "$singular" -gt 0 ] || note "no program here had 1 eligible call or 1 call site"

# no_program NAME WORDS: the sweep of NAME stops with status 127 and WORDS.
no_program() {
	bounded 60 "$SWEEP" -- "$1" >"$TMP/out" 2>"$TMP/err"
	expect_eq "$1: exit status" 127 "$?"
	grep -qxF "gfp-sweep: error: $1: $2" "$TMP/err" ||
		fail "$1: not '$2': $(cat "$TMP/err")"
}
no_program /nonexistent/prog "No such file or directory"
ln -s "$TMP/gone" "$TMP/dangling" || fail "ln -s"
no_program "$TMP/dangling" "No such file or directory"
no_program no-such-program-xyz "command not found"
exit 0
