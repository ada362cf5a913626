#!/bin/bash
# g++ compiling a C++ source (templates, <map>, <string>) to assembly gives
# the same assembly, stderr and status under the idle shim, and so does a
# compilation that fails with template errors. The compiler proper,
# cc1plus, is shown to run under the shim.
source "$TESTS/lib.sh"
source "$TESTS/programs/idle.sh"
need_prog /usr/bin/g++
gxx=/usr/bin/g++
export LC_ALL=C

src="$TESTS/programs/cxx_source.cc"
identical_under_idle_shim gxx "$gxx" -std=gnu++17 -O2 -Wall -S -o - "$src"
expect_status gxx plain 0
expect_contains "assembly of run(int)" "$TMP/gxx.plain.out" '^_Z3runi:$'
expect_contains "a std::map was instantiated" "$TMP/gxx.plain.out" '_ZNSt8_Rb_tree'

# A failing compilation: the same diagnostics and status.
cat >"$TMP/bad.cc" <<'CC'
#include <map>
#include <string>
template <typename T> T twice(T t) { return t + t; }
struct NoPlus {};
int main()
{
	std::map<std::string, NoPlus> m;
	m["x"] = twice(m["y"]);
	return undeclared;
}
CC
identical_under_idle_shim gxxbad "$gxx" -std=gnu++17 -fdiagnostics-color=never -S -o - "$TMP/bad.cc"
expect_status gxxbad plain 1
expect_contains "template error" "$TMP/gxxbad.plain.err" "no match for 'operator\+'"
expect_contains "undeclared name" "$TMP/gxxbad.plain.err" "'undeclared' was not declared"

# The driver runs cc1plus; its GFP_REPORT would be overwritten by the
# driver's when both exit, so a -wrapper gives every subprocess its own
# report, named after the program, and records its pid.
mkdir "$TMP/reports"
cat >"$TMP/wrap.sh" <<'SH'
#!/bin/bash
name=${1##*/}
echo $$ >"$REPORT_DIR/$name.pid"
GFP_REPORT="$REPORT_DIR/$name.json" exec "$@"
SH
chmod +x "$TMP/wrap.sh"
REPORT_DIR="$TMP/reports" run_mode gxx report "$gxx" -wrapper "$TMP/wrap.sh" \
	-std=gnu++17 -O2 -Wall -S -o - "$src"
compare_runs gxx plain report
report="$TMP/reports/cc1plus.json"
expect_eq "report written by cc1plus" "$(cat "$TMP/reports/cc1plus.pid")" \
	"$(report_get "$report" pid)"
expect_at_least "cc1plus: malloc calls" 1000 "$(report_get "$report" malloc.calls)"
expect_at_least "cc1plus: free calls" 100 "$(report_get "$report" free.calls)"
note "cc1plus: $(report_get "$report" totals.calls) calls," \
	"operator new: $(report_get "$report" "operator new.calls")"
