#!/bin/bash
# The budget across threads (sp_threads.c): blocks one thread allocates and
# another frees - one that only frees, lives on or exits - give their bytes
# back, so the filled budget has room again and its live bytes equal
# jemalloc's stats.allocated at every quiescent point; a producer/consumer
# pool does not drift; detached threads that end by pthread_exit do not
# crash the process. Each under the budget routes (limit= alone) and under
# the shim's routes (limit= with stats=sites, which also walks every
# registered thread's counts at exit).
source "$TESTS/lib.sh"
prog="$BUILD/tests/slowpath/sp_threads"

# run NAME POLICY ARGS...: the case must exit 0 within 60 s.
run() {
	local name=$1 pol=$2
	shift 2
	LD_PRELOAD="$SHIM" GFP_POLICY="$pol" GFP_REPORT="$TMP/$name.json" \
		bounded 60 "$prog" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$?
	if [ $rc != 0 ]; then
		cat "$TMP/$name.out" >&2
		grep -v '^  #' "$TMP/$name.err" | head -20 >&2
		fail "$name ($pol): $* exited $rc"
	fi
	grep -E '^budget|after' "$TMP/$name.out" | sed "s/^/# $name: /"
}

for extra in "" ";stats=sites"; do
	tag=${extra:+sites}
	tag=${tag:-routes}
	run "handoff-$tag" "limit=16M$extra" handoff
	expect_contains "handoff-$tag" "$TMP/handoff-$tag.out" 'freed 256 KiB: ok'
	run "handoff-exit-$tag" "limit=16M$extra" handoff --exit
	expect_contains "handoff-exit-$tag" "$TMP/handoff-exit-$tag.out" 'freed 256 KiB: ok'
	run "pool-$tag" "limit=256M$extra" pool
	run "pexit-$tag" "limit=1G$extra" pexit
done
run "pexit-sites-only" "stats=sites" pexit

# gfp_budget_usage() without the shim, under the idle shim, under a budget.
"$prog" usage none >"$TMP/usage.out" 2>&1 || { cat "$TMP/usage.out" >&2; fail "usage without the shim"; }
run usage-idle "" usage idle
run usage-limit "limit=64M" usage 67108864
