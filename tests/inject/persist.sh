#!/bin/bash
# fail.persist=1: after the first injection every later eligible call fails
# too (SQLite's persistent mode), whatever decided the first one (interval,
# space, a random draw, nth). Requests that are not eligible (NOFAIL at
# entry, outside min/max) still succeed.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

seq_expect interval 'fail.probability=1;fail.interval=4' '...X...X..' '10*m100'
seq_expect interval_p 'fail.probability=1;fail.interval=4;fail.persist=1' '...XXXXXXX' '10*m100'
expect_records interval_p injection 7
seq_expect space_p 'fail.probability=1;fail.space=450;fail.persist=1' '....XXXXXX' '10*m100'
seq_expect nth_p 'fail.nth=3;fail.persist=1' '..XXXXXXXX' '10*m100'
seq_expect nth_p0 'fail.nth=3;fail.persist=0' '..X.......' '10*m100'
# Mixed entries keep failing.
seq_expect entries_p 'fail.nth=2;fail.persist=1' '.XXXXXXX' 'm100 c100 r100 a100 p100 A100 s10 k100'
# Pre-filters still apply.
seq_expect nofail_p 'fail.nth=2;fail.persist=1' '.X.X.X' 'm100 m100 n100 m100 n100 m100'
seq_expect min_p 'fail.nth=1;fail.persist=1;fail.min=200' 'X.X.X' 'm200 m100 m300 m100 m200'

# A random first injection.
inj_run rnd 'fail.probability=0.1;fail.seed=11;fail.persist=1' "$INJ/inj_seq" '200*m100'
inj_ok rnd
res=$(sed -n 's/^main //p' "$TMP/rnd.out")
[[ $res =~ ^\.*X+$ ]] && [[ $res == .* ]] || { inj_show rnd; fail "persist after a random injection: $res"; }
note "persist: the first random injection at call $((${#res} - $(echo "$res" | tr -cd X | wc -c) + 1)) of 200, every later call failed"
