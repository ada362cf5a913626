#!/bin/bash
# A request waiting between rounds (wait=5s) proceeds as soon as another
# thread frees memory, not when the 5 s pause ends: NOFS 4096 under a full
# budget and under a real ENOMEM (RLIMIT_AS), the free 300 ms later; under
# the full budget also when the other thread shrinks its blocks with
# realloc instead (the budget routes send a realloc to the shim while
# anyone waits).
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"

for src in budget enomem shrink; do
	pol='default=KERNEL;wait=5s'
	args=(--source $src)
	[ $src = budget ] && pol="$pol;limit=8M"
	[ $src = shrink ] && pol="$pol;limit=8M" args=(--source budget --shrink)
	sp_run $src "$pol" --flags NOFS --size 4096 "${args[@]}" --free-ms 300
	[ "$SP_RC" = 0 ] || { sp_show $src; fail "$src: status $SP_RC"; }
	sp_expect_result $src 0 ok 1
	lat=$(sp_field $src latency_ms)
	el=$(sp_field $src elapsed_ms)
	note "$src: woken ${lat} ms after the free (request took ${el} ms, wait=5s)"
	/usr/bin/python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 100 else 1)" "$lat" ||
		fail "$src: the request proceeded ${lat} ms after the free, expected < 100 ms"
done
