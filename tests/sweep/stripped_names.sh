#!/bin/bash
# A stripped program's frames (cxxprog_stripped, objcopy --strip-all) read
# module+offset: on gfp-sweep's console (-j 2) each of its frames is
# "cxxprog_stripped+0x...", in the JSON its function is null, and the HTML
# page shows no bare hex number for a function. The console says once, on
# one line, which modules had frames without a name and how to get names
# (-g for a file of no package, DEBUGINFOD_URLS); a campaign that sweeps it
# twice says it once too. The unstripped program's sweep does not name it.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
STRIPPED=$BUILD/tests/sweep/cxxprog_stripped
unset DEBUGINFOD_URLS
cd "$TMP" || fail "cd"
[ -z "$(readelf -S "$STRIPPED" | grep -E '\.symtab|\.debug_info')" ] ||
	fail "cxxprog_stripped has a symbol table or debug information"

"$SWEEP" --timeout 60 -j 2 --json "$TMP/s.json" --html "$TMP/s.html" -- "$STRIPPED" >"$TMP/console" 2>"$TMP/err"
expect_eq "gfp-sweep: exit status (the crash)" 1 "$?"
grep -q '^    cxxprog_stripped+0x[0-9a-f]*$' "$TMP/console" ||
	fail "no frame of the stripped program reads module+offset: $(cat "$TMP/console")"
odd=$(grep -E '^    .*cxxprog_stripped\+0x' "$TMP/console" | grep -Ev '^    cxxprog_stripped\+0x[0-9a-f]+$')
[ -z "$odd" ] || fail "frames of the stripped program with other words: $odd"
grep -Eq '>0x[0-9a-f]+<' "$TMP/s.html" &&
	fail "the HTML page names a function by a bare hex number: $(grep -Eo '.{40}>0x[0-9a-f]+<' "$TMP/s.html" | head -3)"
# hint_lines FILE: the console's lines naming modules without names.
hint_lines() { grep -E '^names: no symbols for ' "$1"; }
[ "$(hint_lines "$TMP/console" | wc -l)" = 1 ] ||
	fail "not one line of how to get names: $(hint_lines "$TMP/console"; tail -5 "$TMP/console")"
hint=$(hint_lines "$TMP/console")
for w in 'cxxprog_stripped \(' '-g' 'DEBUGINFOD_URLS'; do
	grep -Eq -- "$w" <<<"$hint" || fail "the names hint lacks /$w/: $hint"
done
note "$hint"

/usr/bin/python3 - "$TMP/s.json" <<'PY' || fail "sweep --json: see above"
import json, sys
sw = json.load(open(sys.argv[1]))
frames = [f for g in sw["findings"] for k in ("injection_frames", "crash_frames") for f in g[k]
          if f["module"] == "cxxprog_stripped"]
if not frames or any(f["function"] is not None or f["symbol"] is not None for f in frames):
    sys.exit(f"FAIL: the stripped program's frames: {frames}")
PY

# Two targets of a campaign, the same stripped program: one hint.
printf '{"id":"one","argv":["%s"]}\n{"id":"two","argv":["%s"]}\n' "$STRIPPED" "$STRIPPED" \
	>"$TMP/camp.jsonl"
"$SWEEP" --timeout 60 -j 2 --campaign "$TMP/camp.jsonl" >"$TMP/camp" 2>"$TMP/err"
expect_eq "the campaign: exit status" 1 "$?"
[ "$(hint_lines "$TMP/camp" | wc -l)" = 1 ] ||
	fail "the campaign: not one names hint: $(hint_lines "$TMP/camp")"

# The unstripped program has its names.
"$SWEEP" --timeout 60 -j 2 -- "$BUILD/tests/sweep/cxxprog" >"$TMP/full" 2>"$TMP/err"
expect_eq "gfp-sweep of cxxprog: exit status" 1 "$?"
hint_lines "$TMP/full" | grep -q 'cxxprog ' && fail "the hint names cxxprog: $(hint_lines "$TMP/full")"
exit 0
