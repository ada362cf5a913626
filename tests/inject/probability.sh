#!/bin/bash
# fail.probability with fail.seed: the calls that fail are the same run to
# run (also for the default seed 0), a different seed gives a different
# pattern, and the share of failures is about the probability. With 4
# threads each thread's pattern is the same run to run, whatever the
# scheduling (also on one CPU), and a thread's pattern depends only on the
# seed and its creation order: thread 0 of a 4-thread run fails the same
# calls as thread 0 of a 1-thread run. interval applies before the draw.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

# pattern TAG POLICY ARGS...: inj_seq's whole output, checked.
pattern() {
	local tag=$1 policy=$2
	shift 2
	inj_run "$tag" "$policy" "$INJ/inj_seq" "$@"
	inj_ok "$tag"
	grep -q '^main ' "$TMP/$tag.out" || { inj_show "$tag"; fail "$tag: no result line"; }
	! grep -q E "$TMP/$tag.out" || { inj_show "$tag"; fail "$tag: a NULL without ENOMEM"; }
}
count_x() { local s=${1//[^X]/}; echo ${#s}; }
in_range() { [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] || fail "$1: $2 not within [$3, $4]"; }

P='fail.probability=0.3;fail.seed=42'
for r in 1 2 3; do pattern "s42_$r" "$P" '400*m100'; done
same_as() { cmp -s "$TMP/$1.out" "$TMP/$2.out" || { diff "$TMP/$1.out" "$TMP/$2.out" | head -20 >&2; fail "$3"; }; }
same_as s42_1 s42_2 "seed 42: runs 1 and 2 differ"
same_as s42_1 s42_3 "seed 42: runs 1 and 3 differ"
x=$(count_x "$(cat "$TMP/s42_1.out")")
in_range "failures of 400 calls at probability 0.3" "$x" 80 160
expect_eq "injection records = failures" "$x" "$(injections s42_1)"
pattern s43 'fail.probability=0.3;fail.seed=43' '400*m100'
! cmp -s "$TMP/s42_1.out" "$TMP/s43.out" || fail "seeds 42 and 43 fail the same calls"
pattern s0a 'fail.probability=0.3' '400*m100'
pattern s0b 'fail.probability=0.3;fail.seed=0' '400*m100'
same_as s0a s0b "the default seed is not 0, or seed 0 is not reproducible"
note "seed 42: $x of 400 failed, identical in 3 runs"

# Probability 0.05: about 20 of 400.
pattern low 'fail.probability=0.05;fail.seed=9' '400*m100'
in_range "failures of 400 calls at probability 0.05" "$(count_x "$(cat "$TMP/low.out")")" 5 40

# interval before the draw: only every 2nd call may fail, and some do.
pattern iv 'fail.probability=0.5;fail.interval=2;fail.seed=5' '200*m100'
res=$(sed -n 's/^main //p' "$TMP/iv.out")
odd=$(echo "$res" | sed 's/\(.\)./\1/g')
even=$(echo "$res" | sed 's/.\(.\)/\1/g')
expect_eq "interval=2: the odd calls never fail" 0 "$(count_x "$odd")"
in_range "interval=2, probability 0.5: failures of the 100 even calls" "$(count_x "$even")" 25 75

# Four threads (and 20 requests of the main thread first).
T='fail.probability=0.3;fail.seed=42'
for r in 1 2 3 4 5; do pattern "t4_$r" "$T" -t 4 -M '20*m100' '150*m100'; done
for r in 2 3 4 5; do same_as t4_1 "t4_$r" "4 threads, seed 42: run $r differs from run 1"; done
[ "$(grep -c '^t[0-3] ' "$TMP/t4_1.out")" = 4 ] || fail "4 threads: not 4 result lines"
for t in 0 1 2 3; do
	in_range "thread $t: failures of 150 at probability 0.3" \
		"$(count_x "$(sed -n "s/^t$t //p" "$TMP/t4_1.out")")" 20 80
done
[ "$(sed -n 's/^t[0-3] //p' "$TMP/t4_1.out" | sort -u | wc -l)" = 4 ] ||
	fail "4 threads fail the same calls: their generators are not derived from their creation order"
if command -v taskset >/dev/null; then
	pattern t4_cpu0 "$T" -t 4 -M '20*m100' '150*m100'
	# Only inj_seq under the shim: taskset's own allocations would be injected.
	taskset -c 0 env GFP_POLICY=$T LD_PRELOAD=$SHIM "$INJ/inj_seq" -t 4 -M '20*m100' '150*m100' \
		>"$TMP/t4_cpu0.out" 2>"$TMP/t4_cpu0.err" || fail "taskset run failed"
	same_as t4_1 t4_cpu0 "4 threads on one CPU differ from the run on all CPUs"
fi
# Creation order, not scheduling, names the generator: thread 0 and thread 1
# of a 4-thread run are threads 0 and 1 of 1- and 2-thread runs.
pattern t1 "$T" -t 1 -M '20*m100' '150*m100'
pattern t2 "$T" -t 2 -M '20*m100' '150*m100'
expect_eq "thread 0 of 1 and of 4 threads" "$(sed -n 's/^t0 //p' "$TMP/t4_1.out")" \
	"$(sed -n 's/^t0 //p' "$TMP/t1.out")"
expect_eq "thread 1 of 2 and of 4 threads" "$(sed -n 's/^t1 //p' "$TMP/t4_1.out")" \
	"$(sed -n 's/^t1 //p' "$TMP/t2.out")"
expect_eq "the main thread's pattern with and without threads" \
	"$(sed -n 's/^main //p' "$TMP/t4_1.out")" "$(sed -n 's/^main //p' "$TMP/t1.out")"
note "4 threads, seed 42: identical in 5 runs and on one CPU"
