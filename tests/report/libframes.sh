#!/bin/bash
# A frame in a shared library reads "function file:line" like the
# program's own, everywhere: gfp-sweep's console, its --json (each frame an
# object: module, path, build_id, offset, function, file, line,
# inlined_into, symbol), gfp-report of that JSON and gfp-report of the
# records, run from a directory where neither the program nor the library
# is (the records' "modules" say where they were). fooprog crashes when
# libfoo's allocation fails, so the sweep has a finding whose failed
# allocation is in the library.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
REPORT=$BUILD/tools/gfp-report
DIR=$BUILD/tests/report
unset DEBUGINFOD_URLS
line() { grep -n "/\* SITE:$1 \*/" "$SRC/tests/report/$2" | cut -d: -f1; }
L_DUP=$(line dup_name libfoo.c) L_CALL=$(line call fooprog.c)
[ -n "$L_DUP" ] && [ -n "$L_CALL" ] || fail "no SITE: markers in libfoo.c, fooprog.c"
LIB=$(realpath "$DIR/libfoo.so") PROG=$(realpath "$DIR/fooprog")
build_id() { readelf -n "$1" | sed -n 's/^ *Build ID: *//p'; }
LIB_ID=$(build_id "$LIB")
[ -n "$LIB_ID" ] || fail "libfoo.so has no build-id"

mkdir "$TMP/elsewhere"
cd "$TMP/elsewhere" || fail "cd"
"$SWEEP" --timeout 60 --json "$TMP/sweep.json" -- "$PROG" >"$TMP/console" 2>"$TMP/err"
expect_eq "gfp-sweep: exit status (findings)" 1 "$?"
want="^    dup_name libfoo\.c:$L_DUP \(libfoo\.so\+0x[0-9a-f]+\)$"
expect_contains "sweep console: the library's frame" "$TMP/console" "$want"
expect_contains "sweep console: the program's caller" "$TMP/console" \
	"^    main fooprog\.c:$L_CALL \(fooprog\+0x[0-9a-f]+\)$"

/usr/bin/python3 - "$TMP/sweep.json" "$LIB" "$LIB_ID" "$PROG" "$L_DUP" "$L_CALL" \
	"$SRC/tests/report" <<'PY' || fail "sweep --json: see above"
import json, os, sys
path, lib, lib_id, prog, l_dup, l_call, src = sys.argv[1:]
sw = json.load(open(path))
bad = []
KEYS = ["module", "path", "build_id", "offset", "function", "file", "line", "inlined_into",
        "symbol"]
found = [g for g in sw["findings"] if g["injection_frames"]
         and g["injection_frames"][0]["module"] == "libfoo.so"]
if len(found) != 1:
    sys.exit(f"FAIL: {len(found)} findings fail in libfoo.so, expected 1: {sw['findings']}")
g = found[0]
for key in ("injection_frames", "crash_frames"):
    if not isinstance(g[key], list) or not g[key]:
        bad.append(f"{key} is not a list of frames: {g[key]!r}")
    for f in g[key]:
        if list(f) != KEYS:
            bad.append(f"{key}: frame keys {list(f)}, expected {KEYS}")
        if not f["offset"].startswith("0x") or not isinstance(f["inlined_into"], list):
            bad.append(f"{key}: frame {f}")
top, caller = g["injection_frames"][:2]
want = {"module": "libfoo.so", "path": lib, "build_id": lib_id, "function": "dup_name",
        "file": os.path.join(src, "libfoo.c"), "line": int(l_dup), "inlined_into": []}
got = {k: top[k] for k in want}
if got != want:
    bad.append(f"the library's frame {got},\n  expected {want}")
if not top["symbol"] or not top["symbol"].startswith("dup_name+"):
    bad.append(f"the library's frame lost its recorded symbol: {top['symbol']!r}")
want = {"module": "fooprog", "path": prog, "function": "main",
        "file": os.path.join(src, "fooprog.c"), "line": int(l_call)}
got = {k: caller[k] for k in want}
if got != want:
    bad.append(f"the program's frame {got},\n  expected {want}")
if bad:
    sys.exit("FAIL: " + "\n".join(bad))
PY

# gfp-report prints the sweep's JSON as the sweep printed it.
"$REPORT" "$TMP/sweep.json" >"$TMP/out" 2>"$TMP/err"
expect_eq "gfp-report of the sweep: exit status" 0 "$?"
expect_contains "gfp-report of the sweep: the library's frame" "$TMP/out" "$want"
expect_eq "the same failed allocation as the console" \
	"$(sed -n '/the failed allocation:/,/reproduce/p' "$TMP/console")" \
	"$(sed -n '/the failed allocation:/,/reproduce/p' "$TMP/out")"

# The records, read elsewhere: the modules are found at their recorded paths.
run_shim GFP_POLICY=fail.nth=1 GFP_RECORD="$TMP/rec.jsonl" "$PROG" >/dev/null 2>&1
[ -s "$TMP/rec.jsonl" ] || fail "fooprog under fail.nth=1 wrote no record"
"$REPORT" "$TMP/rec.jsonl" >"$TMP/out" 2>"$TMP/err"
expect_eq "gfp-report of the records: exit status" 0 "$?"
expect_contains "gfp-report of the records: the library's frame" "$TMP/out" "$want"
expect_contains "gfp-report of the records: the program's frame" "$TMP/out" \
	"^    main fooprog\.c:$L_CALL \(fooprog\+0x[0-9a-f]+\)$"
grep -q 'not found' "$TMP/err" && fail "gfp-report looked for a module: $(cat "$TMP/err")"
exit 0
