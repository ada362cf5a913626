#!/bin/bash
# A GFP_REPORT prints as a table of entry points - malloc with its calls
# (> 0, the file's number), bytes, failures, and a total row - and with
# stats=paths as a table of every call path, sorted by hits.
source "$TESTS/lib.sh"
REPORT=$BUILD/tools/gfp-report

run_shim GFP_POLICY=stats=totals GFP_REPORT="$TMP/totals.json" /usr/bin/python3 -c 1 ||
	fail "python3 failed under the shim"
"$REPORT" "$TMP/totals.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "exit status" 0 "$?"
expect_contains "header names the file and pid" "$TMP/out" 'totals\.json: GFP_REPORT of pid [0-9]+'
expect_contains "column heads" "$TMP/out" '^  entry +calls +bytes +failures$'
calls=$(awk '$1 == "malloc" { print $2 }' "$TMP/out")
[ -n "$calls" ] && [ "$calls" -gt 0 ] || fail "no malloc row with calls > 0: $(cat "$TMP/out")"
want=$(/usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["entries"]["malloc"]["calls"])' "$TMP/totals.json")
expect_eq "malloc calls as in the file" "$want" "$calls"
expect_contains "total row" "$TMP/out" '^  \(total\) +[1-9][0-9]* '

run_shim GFP_POLICY=stats=paths GFP_REPORT="$TMP/sites.json" /usr/bin/python3 -c 1 ||
	fail "python3 failed under the shim"
"$REPORT" "$TMP/sites.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "exit status with sites" 0 "$?"
expect_contains "paths table" "$TMP/out" \
	'^call paths by hits \([0-9]+ paths, [0-9]+ eligible calls\):$'
awk '/^call paths by hits/ { on = 1; next } on && $1 != "site" { print $2 }' "$TMP/out" >"$TMP/hits"
nsites=$(/usr/bin/python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["sites"]))' "$TMP/sites.json")
expect_eq "one row per site" "$nsites" "$(wc -l <"$TMP/hits")"
sort -rn -c "$TMP/hits" || fail "site rows not sorted by hits, descending"
