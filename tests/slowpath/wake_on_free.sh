#!/bin/bash
# A request waiting between rounds (wait=600s) proceeds when another thread
# frees memory, not when the pause ends (it would outlast the run's 120 s):
# NOFS 4096 under a full budget and under a real ENOMEM (RLIMIT_AS), the
# free once the request has printed its first canary (canary.retries=1: it
# is waiting); under the full budget also when the other thread shrinks its
# blocks with realloc instead (the budget routes send a realloc to the shim
# while anyone waits).
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"

for src in budget enomem shrink; do
	pol='default=KERNEL;wait=600s;canary.retries=1'
	args=(--source $src)
	[ $src = budget ] && pol="$pol;limit=8M"
	[ $src = shrink ] && pol="$pol;limit=8M" args=(--source budget --shrink)
	sp_run $src "$pol" --flags NOFS --size 4096 "${args[@]}" --free-on-canary 1
	[ "$SP_RC" != 124 ] || { sp_show $src; fail "$src: not woken by the free (wait=600s)"; }
	[ "$SP_RC" = 0 ] || { sp_show $src; fail "$src: status $SP_RC"; }
	sp_expect_result $src 0 ok 1
	lat=$(sp_field $src latency_ms)
	el=$(sp_field $src elapsed_ms)
	note "$src: woken ${lat} ms after the free (request took ${el} ms, wait=600s)"
done
