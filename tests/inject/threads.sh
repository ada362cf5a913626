#!/bin/bash
# fail.nth counts the eligible calls of the whole process; with
# fail.nth.thread=1 each thread's own Nth call fails (like writing to
# /proc/thread-self/fail-nth in every thread). fail.thread is a glob on the
# thread name (pthread_setname_np); threads it excludes neither fail nor use
# up fail.times.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

# threads_expect TAG POLICY EXPECTED ARGS...: EXPECTED is the whole output
# with lines joined by '|', e.g. "main ..X|t0 ....|t1 ....".
threads_expect() {
	local tag=$1 policy=$2 want=$3
	shift 3
	inj_run "$tag" "$policy" "$INJ/inj_seq" "$@"
	inj_ok "$tag"
	local got
	got=$(paste -sd '|' "$TMP/$tag.out")
	[ "$got" = "$want" ] || { inj_show "$tag"; fail "$tag: policy '$policy': expected $want, got $got"; }
}

ARGS=(-t 3 -n wrk -M '5*m100' '5*m100')
threads_expect per_thread 'fail.nth=2;fail.nth.thread=1' \
	'main .X...|t0 .X...|t1 .X...|t2 .X...' "${ARGS[@]}"
expect_records per_thread injection 4
[ "$($REC get "$TMP/per_thread.rec" injection tid | sort -u | wc -l)" = 4 ] ||
	fail "nth.thread: the 4 injections are not in 4 different threads"
# Without nth.thread the count is the process's: the main thread's 3rd call,
# and nothing in the threads.
threads_expect process 'fail.nth=3' 'main ..X..|t0 .....|t1 .....|t2 .....' "${ARGS[@]}"
threads_expect process_thr 'fail.nth=3;fail.nth.thread=0' 'main ..X..|t0 .....|t1 .....|t2 .....' "${ARGS[@]}"
# The 6th request of every thread: past the main thread's five.
threads_expect per_thread6 'fail.nth=6;fail.nth.thread=1' \
	'main .....|t0 .....|t1 .....|t2 .....' -t 3 -n wrk -M '5*m100' '5*m100'
threads_expect per_thread5 'fail.nth=5;fail.nth.thread=1' \
	'main ....X|t0 ....X|t1 ....X|t2 ....X' "${ARGS[@]}"

# fail.thread: a glob on the name.
ARGS=(-t 3 -n wrk -M '3*m100' '4*m100')
threads_expect name 'fail.probability=1;fail.thread=wrk1' \
	'main ...|t0 ....|t1 XXXX|t2 ....' "${ARGS[@]}"
threads_expect glob 'fail.probability=1;fail.thread=wrk[02]' \
	'main ...|t0 XXXX|t1 ....|t2 XXXX' "${ARGS[@]}"
threads_expect star 'fail.probability=1;fail.thread=w*' \
	'main ...|t0 XXXX|t1 XXXX|t2 XXXX' "${ARGS[@]}"
threads_expect nomatch 'fail.probability=1;fail.thread=nobody' \
	'main ...|t0 ....|t1 ....|t2 ....' "${ARGS[@]}"
expect_records nomatch injection 0
# The thread filter comes before times: the other threads do not use it up.
threads_expect times 'fail.probability=1;fail.times=2;fail.thread=wrk2' \
	'main ...|t0 ....|t1 ....|t2 XX..' "${ARGS[@]}"
# The main thread is named after the program.
seq_expect main_name 'fail.probability=1;fail.thread=inj_se?' 'XXX' '3*m100'
seq_expect main_other 'fail.probability=1;fail.thread=wrk*' '...' '3*m100'
note "nth.thread and fail.thread behave per thread"
