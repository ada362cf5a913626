#!/bin/bash
# Under a policy that only shapes failures, the program's allocations are
# watched (they reach the shim only when jemalloc fails; preload/malloc.c).
# A looping malloc must still be woken at once when another thread gives
# memory back: by a shrinking realloc, and by the frees of a thread none of
# whose calls met the shim before the address space ran out (so the shim
# must have registered it as it started: registering it at its first
# failure, at the last page, could fail, and its frees then woke nobody).
# wait=3s: a waiter nobody wakes returns after about 3000 ms. The same under
# a budget far from its limit, whose routes (preload/malloc.c) watch
# jemalloc's answers once the program has set RLIMIT_AS. ctl=1 keeps the
# shim's own routes: the control.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
PROG=$BUILD/tests/slowpath/sp_watched

for mode in realloc first-failure; do
	for routes in watched budget shim; do
		pol='costly=2M;wait=3s;confirm=1'
		[ $routes = shim ] && pol="$pol;ctl=1"
		[ $routes = budget ] && pol="$pol;limit=64G"
		out=$(GFP_POLICY=$pol GFP_LOG=$TMP/log LD_PRELOAD=$SHIM timeout 60 "$PROG" $mode) ||
			fail "$mode/$routes: exit $?: $out $(tail -3 "$TMP/log")"
		want=$routes
		expect_contains "$mode/$routes: routes" "$TMP/log" "routes: malloc=$want calloc=$want realloc=$want "
		ms=${out##*waited_ms=}
		[ "${out%% *}" = result=ok ] || fail "$mode/$routes: $out"
		[ "$ms" -lt 1000 ] || fail "$mode/$routes: woken after $ms ms, expected about 200 (wait=3s)"
		[ "$ms" -ge 150 ] || fail "$mode/$routes: returned after $ms ms: it never waited for the other thread"
		note "$mode/$routes: $out"
	done
done
