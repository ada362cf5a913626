#!/bin/bash
# A record's frames are named "func file:line" from the module's debug
# information, with the chain of inlined functions ("inner file:line <
# outer file:line"), for a PIE and for a fixed-address executable. Without
# the module the recorded symbol stays; without a symbol, module+offset.
source "$TESTS/lib.sh"
REPORT=$BUILD/tools/gfp-report
DIR=$BUILD/tests/report
line() { grep -n "SITE:$1" "$SRC/tests/report/symprog.c" | cut -d: -f1; }
L_BUF=$(line buffer) L_LABEL=$(line label) L_ENTRY=$(line entry)
[ -n "$L_BUF" ] && [ -n "$L_LABEL" ] && [ -n "$L_ENTRY" ] || fail "no SITE: markers in symprog.c"

for prog in symprog symprog_nopie; do
	for n in 1 2; do
		run_shim GFP_POLICY="fail.nth=$n" GFP_RECORD="$TMP/$prog.$n.jsonl" "$DIR/$prog" \
			>/dev/null 2>&1
		[ -s "$TMP/$prog.$n.jsonl" ] || fail "$prog: no record for fail.nth=$n"
		"$REPORT" --path "$DIR" "$TMP/$prog.$n.jsonl" >"$TMP/out" 2>"$TMP/err"
		expect_eq "$prog nth=$n: exit status" 0 "$?"
		expect_contains "$prog nth=$n: one block" "$TMP/out" \
			'^injection pid [0-9]+ tid [0-9]+ .*entry malloc'
		if [ "$n" = 1 ]; then
			expect_contains "$prog: plain frame" "$TMP/out" \
				"^    make_buffer symprog\.c:$L_BUF \($prog\+0x[0-9a-f]+\)$"
		else
			chain="make_label symprog\.c:$L_LABEL < build_entry symprog\.c:$L_ENTRY"
			expect_contains "$prog: inline chain" "$TMP/out" \
				"^    $chain \($prog\+0x[0-9a-f]+\)$"
		fi
		expect_contains "$prog nth=$n: caller" "$TMP/out" \
			"^    main symprog\.c:[0-9]+ \($prog\+0x"
	done
done

# Without --path the current directory is searched.
(cd "$DIR" && "$REPORT" "$TMP/symprog.1.jsonl") >"$TMP/out" 2>"$TMP/err"
expect_contains "found in ." "$TMP/out" "^    make_buffer symprog\.c:$L_BUF "

# Not found (gone from the path the record names, not in . either): the
# recorded symbol, and one note naming the module.
mkdir "$TMP/gone"
cp "$DIR/symprog" "$TMP/gone/symprog"
run_shim GFP_POLICY=fail.nth=1 GFP_RECORD="$TMP/gone.jsonl" "$TMP/gone/symprog" >/dev/null 2>&1
rm "$TMP/gone/symprog"
(cd "$TMP" && "$REPORT" "$TMP/gone.jsonl") >"$TMP/out" 2>"$TMP/err"
expect_eq "not found: exit status" 0 "$?"
expect_contains "recorded symbol kept" "$TMP/out" \
	'^    make_buffer\+0x[0-9a-f]+ \(symprog\+0x[0-9a-f]+\)$'
expect_contains "note" "$TMP/err" '^gfp-report: note: symprog not found'

# No module, no symbol: module+offset. Spacing and key order as anyone writes.
{
	printf '  { "frames" : [ { "offset" : "0x10", "module" : "nosuch.so" },\t'
	printf '{"symbol":"f+0x1","offset":"0x20","module":"nosuch.so"}], "pid": 7,'
	printf ' "event": "failure"}\n\n'
} >"$TMP/hand.jsonl"
"$REPORT" "$TMP/hand.jsonl" >"$TMP/out" 2>"$TMP/err"
expect_eq "hand-written record: exit status" 0 "$?"
expect_contains "event line" "$TMP/out" '^failure pid 7$'
expect_contains "module+offset" "$TMP/out" '^    nosuch\.so\+0x10$'
expect_contains "recorded symbol" "$TMP/out" '^    f\+0x1 \(nosuch\.so\+0x20\)$'
