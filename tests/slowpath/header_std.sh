#!/bin/bash
# The public header in every language standard (doc/api.md): a program
# using all of its calls compiles with -Wall -Wextra -Wpedantic -Werror as
# C89, C99, C11, C17 and C2x (ISO and GNU dialects) and as C++98 to C++20,
# with gcc/g++ and with clang/clang++ when installed, and each build runs
# without the shim (the inline fallbacks: an implicitly declared
# aligned_alloc under -std=c99 cut its pointer to an int) and under it.
# Usage: header_std.sh 'CC...' 'CXX...' (meson's compilers).
source "$TESTS/lib.sh"
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"
unset GFP_POLICY GFP_RULES GFP_POLICY_FILE LD_PRELOAD
read -ra CC <<<"$1"
read -ra CXX <<<"$2"
PROG=$SRC/tests/slowpath/sp_header.c
FLAGS=(-Wall -Wextra -Wpedantic -Werror -I "$SRC/include" -O1)
ln -sf "$PROG" "$TMP/sp_header.cc"

BAD=
# one LABEL COMPILER... : builds with the compiler command and runs the program.
one() {
	local label=$1 exe=$TMP/$1 rc
	shift
	if ! "$@" "${FLAGS[@]}" -o "$exe" >"$TMP/$label.cc.log" 2>&1; then
		BAD="$BAD
  $label: does not compile: $(head -c 600 "$TMP/$label.cc.log")"
		return
	fi
	for mode in plain shim; do
		rc=0
		if [ $mode = shim ]; then
			LD_PRELOAD=$SHIM bounded 60 "$exe" shim >"$TMP/$label.$mode" 2>&1 || rc=$?
		else
			bounded 60 "$exe" plain >"$TMP/$label.$mode" 2>&1 || rc=$?
		fi
		[ "$rc" = 0 ] && grep -q '^0 failure(s)$' "$TMP/$label.$mode" ||
			BAD="$BAD
  $label $mode: status $rc: $(grep -v '^ok' "$TMP/$label.$mode" | head -c 600)"
	done
}

n=0
for c in "${CC[*]}" ${CLANG:-$(command -v clang)}; do
	read -ra cc <<<"$c"
	for std in c89 gnu89 c99 gnu99 c11 gnu11 c17 gnu17 c2x; do
		one "$(basename "${cc[0]}")-$std" "${cc[@]}" -std=$std "$PROG"
		n=$((n + 1))
	done
done
for c in "${CXX[*]}" ${CLANGXX:-$(command -v clang++)}; do
	read -ra cxx <<<"$c"
	for std in c++98 c++11 c++14 c++17 c++20; do
		one "$(basename "${cxx[0]}")-$std" "${cxx[@]}" -std=$std "$TMP/sp_header.cc"
		n=$((n + 1))
	done
done
[ -z "$BAD" ] || fail "the header fails in these builds:$BAD"
note "$n builds compile without warnings and run without and under the shim"
