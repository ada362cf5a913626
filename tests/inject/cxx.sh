#!/bin/bash
# C++ under injection: a throwing operator new (new[], aligned new) that is
# failed throws std::bad_alloc; a nothrow new returns nullptr; an installed
# new_handler is called first: one that returns makes new try again (the
# retry is a new eligible call, so under nth it succeeds; at probability 1
# with times=3 it is called three times), one that uninstalls itself lets
# the next failure throw. A program of strings, vectors and a map run under
# fail.nth=N for every N until it completes catches std::bad_alloc each time,
# and completes with the right result once N is past its last request.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

cxx_expect() { # TAG POLICY TOKENS EXPECTED
	inj_run "$1" "$2" "$INJ/inj_cxx" ops "$3"
	inj_ok "$1"
	local got
	got=$(cat "$TMP/$1.out")
	[ "$got" = "$4" ] || { inj_show "$1"; fail "$1: policy '$2', tokens $3: expected '$4', got '$got'"; }
}
cxx_expect plain '' tnat 'main .... handler=0'
cxx_expect throw 'fail.nth=2' tttt 'main .B.. handler=0'
expect_eq "entry of the injected new[]" 'operator new[]' "$($REC get "$TMP/throw.rec" injection entry)"
cxx_expect nothrow 'fail.nth=3' nnnn 'main ..N. handler=0'
expect_eq "entry of the injected nothrow new[]" 'operator new[](nothrow)' "$($REC get "$TMP/nothrow.rec" injection entry)"
cxx_expect aligned 'fail.nth=1' aa 'main B. handler=0'
expect_eq "entry of the injected aligned new" 'operator new(align)' "$($REC get "$TMP/aligned.rec" injection entry)"
cxx_expect all 'fail.probability=1' tnan 'main BNBN handler=0'
note "bad_alloc and nullptr"

cxx_expect handler_nth 'fail.nth=1' htt 'main .. handler=1'
cxx_expect handler_nth2 'fail.nth=2' htt 'main .. handler=1'
cxx_expect handler_times 'fail.probability=1;fail.times=3' htt 'main .. handler=3'
cxx_expect handler_once 'fail.probability=1;fail.times=2' utt 'main B. handler=1'
cxx_expect handler_nothrow 'fail.probability=1;fail.times=1' hn 'main . handler=1'
note "the new_handler runs before std::bad_alloc"

# The workload under fail.nth=1, 2, ... two at a time.
expect_out=$(LD_PRELOAD=$SHIM "$INJ/inj_cxx" work) || fail "work without injection failed"
run_work() {
	local n=$1 rc=0
	GFP_POLICY="fail.nth=$n" LD_PRELOAD=$SHIM bounded 60 "$INJ/inj_cxx" work >"$TMP/w$n.out" 2>"$TMP/w$n.err" || rc=$?
	echo "$rc" >"$TMP/w$n.rc"
}
n=0 last=0
while [ "$last" = 0 ] && [ "$n" -lt 2000 ]; do
	run_work $((n + 1)) & run_work $((n + 2)) & wait
	for k in $((n + 1)) $((n + 2)); do
		rc=$(cat "$TMP/w$k.rc")
		if [ "$rc" = 0 ]; then
			expect_eq "work under fail.nth=$k: output" "$expect_out" "$(cat "$TMP/w$k.out")"
			[ "$last" = 0 ] && last=$k
		elif [ "$last" = 0 ]; then
			[ "$rc" = 3 ] && grep -qx 'caught std::bad_alloc' "$TMP/w$k.out" || {
				cat "$TMP/w$k.err" >&2
				fail "work under fail.nth=$k: status $rc, stdout '$(cat "$TMP/w$k.out")'"
			}
		fi
	done
	n=$((n + 2))
done
[ "$last" -gt 100 ] || fail "the workload completed already under fail.nth=$last"
note "fail.nth=1..$((last - 1)): std::bad_alloc each time; nth=$last completed ($expect_out)"
