#!/bin/bash
# NOFAIL requests (gfp_malloc(..., KERNEL|NOFAIL)) are never failed at
# entry, even at probability 1, and are not eligible calls: nth does not
# count them. fail.ignore_wait=1 exempts every request that may sleep
# (direct reclaim: KERNEL, also with NORETRY), leaving NOWAIT and ATOMIC
# ones, and exempt requests are not counted either.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

seq_expect p1 'fail.probability=1' '..........' '10*n100'
expect_records p1 injection 0
seq_expect p1_big 'fail.probability=1' '..' 'n4096 n100000'
seq_expect mixed 'fail.probability=1' 'X.X.X' 'm100 n100 k100 n100 y100'
expect_records mixed injection 3
# Not counted by nth.
seq_expect nth 'fail.nth=2' '..X..' 'm100 n100 m100 n100 m100'
seq_expect nth_only_nofail 'fail.nth=1' '.....' '5*n100'
# Nor by interval.
seq_expect interval 'fail.probability=1;fail.interval=2' '..X...X' 'm100 n100 m100 n100 m100 n100 m100'
note "NOFAIL never failed at entry nor counted"

# ignore_wait: only requests that cannot sleep stay eligible.
seq_expect ignore_wait 'fail.probability=1;fail.ignore_wait=1' '..XX..' 'm100 k100 w100 t100 y100 n100'
seq_expect ignore_wait_nth 'fail.nth=2;fail.ignore_wait=1' '...X' 'w100 m100 k100 t100'
seq_expect ignore_wait_default 'default=NOWAIT;fail.probability=1;fail.ignore_wait=1' 'XX.' 'm100 m100 k100'
# Without it, sleeping requests are eligible (unlike the kernel's default).
seq_expect no_ignore_wait 'fail.probability=1' 'XXXX.' 'm100 k100 w100 t100 n100'
note "ignore_wait exempts the requests that may sleep"
