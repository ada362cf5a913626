#!/bin/bash
# The shim sets libunwind up at its first backtrace, not at start-up: a
# first backtrace from four threads at once, from a signal handler, and
# from a child forked before any (and then from its parent) each name the
# strdup's caller, as stats=sites counts it: every row has its calls.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/report/first_unwind

# check.py REPORT FUNCTION CALLS
cat >"$TMP/check.py" <<'PY'
import json, sys
rep, func, calls = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
rows = [r for r in rep.get("allocinfo", []) if r.get("symbol", "").startswith(func + "+")]
got = [(r["calls"], r["live_calls"], r["bytes"]) for r in rows]
if got != [(calls, calls, 25 * calls)]:
    libc = [(r["module"], r["calls"]) for r in rep.get("allocinfo", []) if "libc" in r["module"]]
    sys.exit(f"FAIL: {func}: rows (calls, live_calls, bytes) {got}, expected one of "
             f"{(calls, calls, 25 * calls)}; libc's rows {libc}")
PY

for run in 1 2 3; do
	for c in "threads dup_in_thread 400" "signal dup_in_handler 100" "fork dup_in_thread 100"; do
		read -r mode func calls <<<"$c"
		rm -f "$TMP"/rep.*.json
		out=$(timeout -s KILL 60 env LD_PRELOAD="$SHIM" GFP_POLICY=stats=sites \
			GFP_REPORT="$TMP/rep.%p.json" "$PROG" "$mode" 2>"$TMP/err") ||
			fail "$mode: exit $?: $(tail -3 "$TMP/err")"
		[ "$(tail -1 <<<"$out")" = done ] || fail "$mode: printed '$out'"
		reps=("$TMP"/rep.*.json)
		if [ "$mode" = fork ]; then
			[ ${#reps[@]} = 2 ] || fail "fork: ${#reps[@]} reports"
			child=$(grep -l dup_in_child "${reps[@]}") || fail "fork: no report of the child"
			/usr/bin/python3 "$TMP/check.py" "$child" dup_in_child 100 || fail "fork, the child: see above"
			for r in "${reps[@]}"; do
				[ "$r" = "$child" ] || /usr/bin/python3 "$TMP/check.py" "$r" "$func" "$calls" ||
					fail "fork, the parent: see above"
			done
		else
			[ ${#reps[@]} = 1 ] || fail "$mode: ${#reps[@]} reports"
			/usr/bin/python3 "$TMP/check.py" "${reps[0]}" "$func" "$calls" || fail "$mode: see above"
		fi
	done
done
note "first backtraces from threads, a signal handler and a forked child name their callers"
