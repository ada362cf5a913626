#!/bin/bash
# The checks after nth, in the kernel's order (should_fail_ex): probability
# 0 stops everything (interval alone injects nothing); then times (at most
# that many injections, -1 no limit, 0 none); space (requested bytes let
# through before the first injection, counted only while it lasts); interval
# (every Nth call that got that far); min/max bound the eligible sizes.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"
ten='10*m100'

# Probability 0 (the default) turns the checks after nth off.
seq_expect interval_alone 'fail.interval=3' '..........' "$ten"
seq_expect times_alone 'fail.times=5' '..........' "$ten"
seq_expect p0 'fail.probability=0;fail.interval=1' '..........' "$ten"
expect_records p0 injection 0

seq_expect p1 'fail.probability=1' 'XXXXXXXXXX' "$ten"
expect_records p1 injection 10
seq_expect p1_percent 'fail.probability=100%' 'XXXXXXXXXX' "$ten"

# interval: every Nth eligible call.
seq_expect interval3 'fail.probability=1;fail.interval=3' '..X..X..X.' "$ten"
expect_records interval3 injection 3
expect_eq "interval3: calls of the injections" '3 6 9' \
	"$($REC get "$TMP/interval3.rec" injection call | tr '\n' ' ' | sed 's/ $//')"

# times: at most N injections; -1 no limit; 0 none.
seq_expect times3 'fail.probability=1;fail.times=3' 'XXX.......' "$ten"
seq_expect times_unlimited 'fail.probability=1;fail.times=-1' 'XXXXXXXXXX' "$ten"
seq_expect times0 'fail.probability=1;fail.times=0' '..........' "$ten"
# times counts injections, not calls: with interval 3, the 3rd and 6th fail.
seq_expect times_interval 'fail.probability=1;fail.interval=3;fail.times=2' '..X..X....' "$ten"

# space: 950 bytes of 100-byte requests let 9 through, then every call fails.
seq_expect space 'fail.probability=1;fail.space=950' '.........X' "$ten"
# Sizes count, not calls: of 2450, a 2000-byte request leaves 450, four of
# 100 leave 50; a request larger than what is left fails at once.
seq_expect space_size 'fail.probability=1;fail.space=2450' '.....XX' 'm2000 6*m100'
# space > size lets a request through and takes its size; a request larger than
# what is left is not let through and leaves space alone (should_fail_ex).
seq_expect space_big 'fail.probability=1;fail.space=1500' 'X..' 'm2000 m100 m100'
# space before times: the let-through calls do not use up times.
seq_expect space_times 'fail.probability=1;fail.space=250;fail.times=2' '..XX......' "$ten"
# space before interval: interval counts only calls that space let reach it
# (calls 3, 4, 5... are its 1st, 2nd, 3rd), so the 4th, 6th, 8th, 10th fail.
seq_expect space_interval 'fail.probability=1;fail.space=250;fail.interval=2' '...X.X.X.X' "$ten"

# min/max: inclusive bounds of eligible sizes.
seq_expect min 'fail.probability=1;fail.min=200' '.XXX' 'm100 m200 m300 m400'
seq_expect max 'fail.probability=1;fail.max=300' 'XXX.' 'm100 m200 m300 m400'
seq_expect minmax 'fail.probability=1;fail.min=200;fail.max=300' '.XX.' 'm100 m200 m300 m400'
# Ineligible calls are not counted by interval either.
seq_expect min_interval 'fail.probability=1;fail.min=1000;fail.interval=2' '...X...X' \
	'm100 m1000 m100 m1000 m100 m1000 m100 m1000'
# Sizes take K/M.
seq_expect min_k 'fail.probability=1;fail.min=1K' '..X' 'm100 m1023 m1024'
note "probability 0, interval, times, space, min/max in the kernel's order"

# The boundary is the kernel's (lib/fault-inject.c: "if (space > size)
# { space -= size; return false; }"): with 100 left, a 100-byte request
# is no longer let through.
seq_expect space_boundary 'fail.probability=1;fail.space=200' '.XX' '3*m100'
