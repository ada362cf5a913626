#!/bin/bash
# A C program that dlopens (RTLD_NOW | RTLD_LOCAL) a C++ plugin gets the
# shim's operator new and new[] in the plugin: the GFP_REPORT counts at
# least the plugin's n calls of each, and dladdr names the shim as the
# definer. Neither libstdc++'s nor libjemalloc's exported operators are
# reachable around it.
# usage: dlopen_plugin.sh PATH-OF-dlopen_plugin PATH-OF-PLUGIN
source "$TESTS/lib.sh"
source "$TESTS/cxx/report.sh"
prog=${1:?usage: dlopen_plugin.sh PROGRAM PLUGIN}
plugin=${2:?usage: dlopen_plugin.sh PROGRAM PLUGIN}
n=1000

# The program itself is C: the plugin brings libstdc++ in.
if readelf -d "$prog" 2>/dev/null | grep -q 'libstdc++'; then
	fail "$prog links libstdc++; the test needs a plain C program"
fi

# Without the shim the plugin works, with libstdc++'s operator new.
rc=0
"$prog" "$plugin" "$n" >"$TMP/noshim.out" 2>"$TMP/noshim.err" || rc=$?
cat "$TMP/noshim.err" >&2
expect_eq "status without the shim" 0 "$rc"
expect_contains "without the shim" "$TMP/noshim.out" "^plugin_run\\($n\\) = $n\$"
expect_contains "operator new without the shim" "$TMP/noshim.out" '^operator new from .*libstdc\+\+'

# Idle shim.
rc=0
LD_PRELOAD="$SHIM" "$prog" "$plugin" "$n" >"$TMP/idle.out" 2>"$TMP/idle.err" || rc=$?
cat "$TMP/idle.err" >&2
expect_eq "status under the idle shim" 0 "$rc"
expect_contains "under the idle shim" "$TMP/idle.out" "^plugin_run\\($n\\) = $n\$"
owner=$(sed -n 's/^operator new from //p' "$TMP/idle.out")
expect_eq "file defining the plugin's operator new" "$(readlink -f "$SHIM")" \
	"$(readlink -f "$owner")"

# Counting on: the report counts the plugin's calls.
rc=0
GFP_REPORT="$TMP/report.json" LD_PRELOAD="$SHIM" "$prog" "$plugin" "$n" \
	>"$TMP/report.out" 2>"$TMP/report.err" &
pid=$!
wait "$pid" || rc=$?
cat "$TMP/report.err" >&2
expect_eq "status with GFP_REPORT" 0 "$rc"
expect_contains "with GFP_REPORT" "$TMP/report.out" "^plugin_run\\($n\\) = $n\$"
# Two operator new per round: the std::string object and its characters.
cat >"$TMP/expect" <<EXP
expect operator new $((2 * n))
expect operator new[] $n
expect operator delete(sized) $((2 * n))
expect operator delete[] $n
EXP
check_report "$TMP/report.json" "$pid" "$TMP/expect"
