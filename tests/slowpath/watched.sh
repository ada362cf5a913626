#!/bin/bash
# Under a policy that only shapes failures, the program's allocations are
# watched (they reach the shim only when jemalloc fails; preload/malloc.c).
# A looping malloc must still be woken at once when another thread gives
# memory back: by a shrinking realloc, and by the frees of a thread none of
# whose calls met the shim before the address space ran out (so the shim
# must have registered it as it started: registering it at its first
# failure, at the last page, could fail, and its frees then woke nobody).
# wait=600s: a waiter nobody wakes does not return before the run's
# deadline (120 s, generous: the other thread gives back after 200 ms). The
# same under a budget far from its limit, whose routes (preload/malloc.c)
# watch jemalloc's answers once the program has set RLIMIT_AS. ctl=1 keeps
# the shim's own routes: the control.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
PROG=$BUILD/tests/slowpath/sp_watched

for mode in realloc first-failure; do
	for routes in watched budget shim; do
		pol='costly=2M;wait=600s;confirm=1'
		[ $routes = shim ] && pol="$pol;ctl=1"
		[ $routes = budget ] && pol="$pol;limit=64G"
		rc=0
		out=$(GFP_POLICY=$pol GFP_LOG=$TMP/log LD_PRELOAD=$SHIM bounded 120 "$PROG" $mode) || rc=$?
		[ "$rc" != 124 ] || fail "$mode/$routes: not woken in 120 s (wait=600s): $(tail -3 "$TMP/log")"
		[ "$rc" = 0 ] || fail "$mode/$routes: exit $rc: $out $(tail -3 "$TMP/log")"
		want=$routes
		expect_contains "$mode/$routes: routes" "$TMP/log" "routes: malloc=$want calloc=$want realloc=$want "
		[ "${out%% *}" = result=ok ] || fail "$mode/$routes: $out"
		[[ $out == *" after_give_back=1 "* ]] ||
			fail "$mode/$routes: returned before the other thread gave memory back: $out"
		note "$mode/$routes: $out"
	done
done
