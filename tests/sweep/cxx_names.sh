#!/bin/bash
# C++ frames read as ASan and valgrind print them, demangled: the crash of
# cxxprog's inventory::Shelf::label reads "inventory::Shelf::label(char
# const*, int) cxxprog.cc:N" in gfp-sweep's console (-j 2), in its --json
# ("function" the whole name), in gfp-report of that JSON and of the
# records; no "_Z..." name anywhere on the console. A long name (the
# vector's _M_realloc_insert, inlined chain and all) keeps its function name
# and parameters on the console with its template arguments cut to "<...>",
# and is whole in the JSON. A real Debian C++ program (apt-config, its
# frames in libapt-pkg named by exported symbols) prints no mangled name
# either, in gfp-report of its records nor in a sweep's console, JUnit
# test names and HTML page.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep
REPORT=$BUILD/tools/gfp-report
PROG=$BUILD/tests/sweep/cxxprog
unset DEBUGINFOD_URLS
line() { grep -n "/\* SITE:$1 \*/" "$SRC/tests/sweep/cxxprog.cc" | cut -d: -f1; }
L_LABEL=$(line label)
[ -n "$L_LABEL" ] || fail "no SITE:label marker in cxxprog.cc"
MANGLED='(^|[^A-Za-z0-9_])_Z[A-Za-z0-9_]+'
# no_mangled WHAT FILE: no mangled C++ name in FILE.
no_mangled() {
	! grep -Eq "$MANGLED" "$2" || fail "$1: mangled names: $(grep -Eo "$MANGLED" "$2" | head -3)"
}

cd "$TMP" || fail "cd"
"$SWEEP" --timeout 60 -j 2 --json "$TMP/sweep.json" -- "$PROG" >"$TMP/console" 2>"$TMP/err"
expect_eq "gfp-sweep: exit status (the crash)" 1 "$?"
want="^    inventory::Shelf::label\(char const\*, int\) cxxprog\.cc:$L_LABEL \(cxxprog\+0x[0-9a-f]+\)$"
expect_contains "sweep console: the crash in the method" "$TMP/console" "$want"
no_mangled "sweep console" "$TMP/console"

/usr/bin/python3 - "$TMP/sweep.json" "$L_LABEL" <<'PY' || fail "sweep --json: see above"
import json, re, sys
sw, l_label = json.load(open(sys.argv[1])), int(sys.argv[2])
bad = []
frames = [f for g in sw["findings"] for k in ("injection_frames", "crash_frames") for f in g[k]]
frames += [s[k] for s in sw["abort_sites"] for k in ("aborter", "allocation") if s[k]]
names = [f["function"] for f in frames] + [i["function"] for f in frames for i in f["inlined_into"]]
crash = [g for g in sw["findings"] if g["outcome"] == "crash"]
top = crash[0]["crash_frames"][0] if crash and crash[0]["crash_frames"] else {}
if (top.get("function"), top.get("line")) != ("inventory::Shelf::label(char const*, int)", l_label):
    bad.append(f"the crash's top frame: {top}")
if [n for n in names if n and n.startswith("_Z")]:
    bad.append(f"mangled functions: {[n for n in names if n and n.startswith('_Z')]}")
# The whole name, template arguments and all.
if not [n for n in names if n and re.search(
        r"std::vector<int, std::allocator<int> >::_M_realloc_insert<.*>\(", n)]:
    bad.append(f"no whole name of the vector's _M_realloc_insert among {names}")
if bad:
    sys.exit("FAIL: " + "\n  ".join(bad))
PY

# gfp-report prints the sweep's JSON with the same names.
"$REPORT" "$TMP/sweep.json" >"$TMP/report" 2>"$TMP/err"
expect_eq "gfp-report of the sweep: exit status" 0 "$?"
expect_contains "gfp-report of the sweep: the crash in the method" "$TMP/report" "$want"
no_mangled "gfp-report of the sweep" "$TMP/report"

# And the records: the crash's, and the vector's failed allocation, whose
# name is cut on the console.
policy=$(/usr/bin/python3 -c 'import json, sys
print([g for g in json.load(open(sys.argv[1]))["findings"] if g["outcome"] == "crash"][0]["policy"])' \
	"$TMP/sweep.json") || fail "no crash finding's policy"
run_shim GFP_POLICY="$policy" GFP_RECORD="$TMP/crash.jsonl" "$PROG" >/dev/null 2>&1
run_shim GFP_POLICY="fail.nth=1" GFP_RECORD="$TMP/vector.jsonl" "$PROG" >/dev/null 2>&1
for rec in crash vector; do
	[ -s "$TMP/$rec.jsonl" ] || fail "cxxprog wrote no $rec record"
	"$REPORT" "$TMP/$rec.jsonl" >"$TMP/$rec.out" 2>"$TMP/err"
	expect_eq "gfp-report of the $rec records: exit status" 0 "$?"
	no_mangled "gfp-report of the $rec records" "$TMP/$rec.out"
done
expect_contains "gfp-report of the records: the crash in the method" "$TMP/crash.out" "$want"
expect_contains "gfp-report of the records: the vector's growth, its name cut" "$TMP/vector.out" \
	'std::vector<\.\.\.>::_M_realloc_insert<\.\.\.>\(__gnu_cxx::__normal_iterator<\.\.\.>, '
grep -q 'std::allocator<int> >::_M_realloc_insert' "$TMP/vector.out" &&
	fail "the console form kept the template arguments: $(grep _M_realloc_insert "$TMP/vector.out")"

# A real C++ program: apt-config's frames in libapt-pkg have exported
# (mangled) symbols only.
APT=/usr/bin/apt-config
[ -x "$APT" ] || { note "apt-config is not installed: no real C++ program"; exit 0; }
run_shim GFP_POLICY="fail.nth=3000" GFP_RECORD="$TMP/apt.jsonl" "$APT" dump >/dev/null 2>&1
[ -s "$TMP/apt.jsonl" ] || fail "apt-config dump under fail.nth=3000 wrote no record"
"$REPORT" "$TMP/apt.jsonl" >"$TMP/apt.out" 2>"$TMP/err"
expect_eq "gfp-report of apt-config's records: exit status" 0 "$?"
no_mangled "gfp-report of apt-config's records" "$TMP/apt.out"
expect_contains "apt-config: a libapt-pkg frame named Class::method(args)" "$TMP/apt.out" \
	'^    [A-Za-z_:]+::[A-Za-z_~]+\(.*\)\+0x[0-9a-f]+ \(libapt-pkg\.so[.0-9]*\+0x[0-9a-f]+\)$'
note "apt-config: $(grep -m1 -E '::.*libapt-pkg' "$TMP/apt.out")"
# Swept: the console, the JUnit test names and the HTML page (the JSON's
# "symbol" is the record's, as recorded).
"$SWEEP" -j 2 --timeout 20 --max-runs 60 --junit "$TMP/apt.xml" --html "$TMP/apt.html" -- \
	"$APT" dump >"$TMP/apt.console" 2>"$TMP/err"
st=$?
[ "$st" = 0 ] || [ "$st" = 1 ] || fail "gfp-sweep of apt-config exited $st: $(tail -3 "$TMP/err")"
for f in apt.console apt.xml apt.html; do
	no_mangled "apt-config's sweep: $f" "$TMP/$f"
done
grep -q '::' "$TMP/apt.xml" || fail "apt-config's JUnit report names no C++ function"
exit 0
