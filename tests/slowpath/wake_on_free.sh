#!/bin/bash
# A request waiting between rounds (wait=5s) proceeds as soon as another
# thread frees memory, not when the 5 s pause ends: NOFS 4096 under a full
# budget and under a real ENOMEM (RLIMIT_AS), the free 300 ms later.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"

for src in budget enomem; do
	pol='default=KERNEL;wait=5s'
	[ $src = budget ] && pol="$pol;limit=8M"
	sp_run $src "$pol" --flags NOFS --size 4096 --source $src --free-ms 300
	[ "$SP_RC" = 0 ] || { sp_show $src; fail "$src: status $SP_RC"; }
	sp_expect_result $src 0 ok 1
	lat=$(sp_field $src latency_ms)
	el=$(sp_field $src elapsed_ms)
	note "$src: woken ${lat} ms after the free (request took ${el} ms, wait=5s)"
	/usr/bin/python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 100 else 1)" "$lat" ||
		fail "$src: the request proceeded ${lat} ms after the free, expected < 100 ms"
done
