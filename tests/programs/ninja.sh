#!/bin/bash
# ninja (C++, linked against libstdc++.so) loading a generated manifest,
# planning a dry-run build and answering graph queries gives the same
# stdout, stderr and status under the idle shim; its C++ operator new calls
# are served by the shim.
source "$TESTS/lib.sh"
source "$TESTS/programs/idle.sh"
need_prog /usr/bin/ninja
ninja=/usr/bin/ninja

# 400 objects in 20 libraries, with implicit and order-only dependencies.
mkdir "$TMP/proj"
{
	cat <<'NINJA'
ninja_required_version = 1.5
rule cc
  command = cc -c $in -o $out $flags
  description = CC $out
rule ar
  command = ar rcs $out $in
  description = AR $out
rule link
  command = cc -o $out $in
  description = LINK $out
NINJA
	echo 'build gen/config.h: cc gen/config.in'
	libs=
	for l in $(seq 0 19); do
		objs=
		for o in $(seq 0 19); do
			echo "build obj/l$l/f$o.o: cc src/l$l/f$o.c | src/common.h || gen/config.h"
			echo "  flags = -DLIB=$l -DOBJ=$o"
			objs="$objs obj/l$l/f$o.o"
		done
		echo "build lib/libl$l.a: ar$objs"
		libs="$libs lib/libl$l.a"
	done
	echo "build bin/app: link obj/main.o$libs"
	echo "build obj/main.o: cc src/main.c"
	echo 'default bin/app'
} >"$TMP/proj/build.ninja"
mkdir -p "$TMP/proj/src" "$TMP/proj/gen"
touch "$TMP/proj/src/main.c" "$TMP/proj/src/common.h" "$TMP/proj/gen/config.in"
for l in $(seq 0 19); do
	mkdir "$TMP/proj/src/l$l"
	(cd "$TMP/proj/src/l$l" && touch $(seq -f 'f%g.c' 0 19))
done

n=0
for args in "-n -j1" "-t targets all" "-t commands bin/app" "-t query lib/libl7.a" \
	"-t inputs bin/app"; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # $args is split on purpose
	identical_under_idle_shim "ninja$n" "$ninja" -C "$TMP/proj" $args
	expect_status "ninja$n" plain 0
done
expect_contains "dry run plan" "$TMP/ninja1.plain.out" '^\[423/423\] LINK bin/app$'
expect_eq "lines of -t targets all" 423 "$(wc -l <"$TMP/ninja2.plain.out")"
expect_eq "commands for bin/app" 423 "$(wc -l <"$TMP/ninja3.plain.out")"
expect_contains "query" "$TMP/ninja4.plain.out" '^  input: ar$'
expect_eq "inputs of bin/app" 825 "$(wc -l <"$TMP/ninja5.plain.out")"

served_by_shim ninja1 "operator new" 1000 "$ninja" -C "$TMP/proj" -n -j1
