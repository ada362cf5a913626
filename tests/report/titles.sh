#!/bin/bash
# frame_title, what a finding's title calls a frame: the innermost place of
# its inline chain in the program's own source, not code inlined from the
# library's headers. cxxprog's vector grows in inventory::Shelf::stock,
# where push_back and the allocator are inlined from <vector>: the first
# frame of the program's own with a title of its own is
# "inventory::Shelf::stock(int) cxxprog.cc:N", and no title of its own
# names a header of /usr/include. A frame in the library's code alone is no
# title of the program's; a crash in the program's method is.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/sweep/cxxprog
TITLES=$BUILD/tests/report/titles
unset DEBUGINFOD_URLS
line() { grep -n "/\* SITE:$1 \*/" "$SRC/tests/sweep/cxxprog.cc" | cut -d: -f1; }
L_STOCK=$(line stock) L_LABEL=$(line label)
[ -n "$L_STOCK" ] && [ -n "$L_LABEL" ] || fail "no SITE: markers in cxxprog.cc"
cd "$TMP" || fail "cd"
# The first eligible call is the vector's first growth.
run_shim GFP_POLICY="fail.nth=1" GFP_RECORD="$TMP/vector.jsonl" "$PROG" >/dev/null 2>&1
"$TITLES" "$TMP/vector.jsonl" injection >"$TMP/vector" || fail "titles of the injection failed"
own=$(grep -m1 '^own ' "$TMP/vector")
expect_eq "the first title of the program's own" \
	"own inventory::Shelf::stock(int) cxxprog.cc:$L_STOCK" "$own"
# The headers of libstdc++ by base name (titles name files so).
headers=$(find /usr/include/c++ -type f -printf '%f\n' 2>/dev/null | sort -u)
[ -n "$headers" ] || fail "no C++ library headers under /usr/include/c++"
while read -r kind title; do
	[ "$kind" = own ] || continue
	file=${title##* }
	grep -qxF -- "${file%:*}" <<<"$headers" &&
		fail "a title of the program's own names a library header: $title"
done <"$TMP/vector"
grep -Eq '^lib .*_M_realloc_insert' "$TMP/vector" ||
	note "no out-of-line _M_realloc_insert frame with this compiler: $(cat "$TMP/vector")"

# The label's malloc comes after the growths: the first call that makes
# the program segfault.
policy=""
for n in 1 2 3 4 5 6; do
	rm -f "$TMP/label.jsonl"
	run_shim GFP_POLICY="fail.nth=$n" GFP_RECORD="$TMP/label.jsonl" "$PROG" >/dev/null 2>&1
	if grep -q '"event":"crash",.*"signal":11,' "$TMP/label.jsonl" 2>/dev/null; then
		policy=fail.nth=$n
		break
	fi
done
[ -n "$policy" ] || fail "no fail.nth=1..6 makes cxxprog segfault"
"$TITLES" "$TMP/label.jsonl" crash >"$TMP/crash" || fail "titles of the crash failed"
expect_eq "the crash's top frame ($policy)" \
	"own inventory::Shelf::label(char const*, int) cxxprog.cc:$L_LABEL" "$(head -1 "$TMP/crash")"
exit 0
