#!/bin/bash
# The call-site cache keys on what the rules look at. caller_a and caller_b
# both reach malloc through xmalloc (one return address): under a sym:
# rule the key covers rules.depth frames, so 'sym:caller_a => NORETRY' makes
# caller_a's requests fail after their round while caller_b's stay KERNEL
# and reach the OOM step, in either order, and 'sym:caller_b' flips
# it; rules.depth=1 sees only xmalloc. A lib: rule looks at the first frame
# outside the shim and libc: lib:rules_prog covers every request of the
# program (strdup's too), lib:libc.so* none of them, lib:libfoo* none.
source "$TESTS/lib.sh"
source "$TESTS/rules/rules.sh"

K='KERNEL oom' N='KERNEL|NORETRY noretry'
rp_run a "sym:caller_a => NORETRY" "$PRESSURE" fill a:4096 b:4096 a:4096 b:4096
rp_expect "sym:caller_a, a first" a "a 4096 $N;b 4096 $K;a 4096 $N;b 4096 $K"
rp_expect_out "sym:caller_a results" a "a:4096=null b:4096=null a:4096=null b:4096=null"
grep -q '^filled=[1-9]' "$TMP/a.out" || { rp_show a; fail "the budget was not filled"; }

rp_run a2 "sym:caller_a => NORETRY" "$PRESSURE" fill b:4096 a:4096 b:4096 a:4096
rp_expect "sym:caller_a, b first" a2 "b 4096 $K;a 4096 $N;b 4096 $K;a 4096 $N"

rp_run b "sym:caller_b => NORETRY" "$PRESSURE" fill a:4096 b:4096 a:4096 b:4096
rp_expect "sym:caller_b flips it" b "a 4096 $K;b 4096 $N;a 4096 $K;b 4096 $N"

rp_run d1 "sym:caller_a => NORETRY" "$PRESSURE;rules.depth=1" fill a:4096 b:4096
rp_expect "rules.depth=1 sees only xmalloc" d1 "a 4096 $K;b 4096 $K"
rp_run d2 "sym:caller_a => NORETRY" "$PRESSURE;rules.depth=2" fill b:4096 a:4096
rp_expect "rules.depth=2 sees the callers" d2 "b 4096 $K;a 4096 $N"

rp_run own "lib:rules_prog => NORETRY" "$PRESSURE" fill a:4096 b:4096 sd:4096 thr:4096
rp_expect "lib:rules_prog" own "a 4096 $N;b 4096 $N;sd 4096 $N;thr 4096 $N"
fills=$($RECSUM who "$TMP/own.rec" | grep '^fill ' | paste -sd ';')
expect_eq "lib:rules_prog, the filling requests" \
	"fill 4096 $N;fill 256 $N;fill 8 $N" "$fills"

rp_run libc "lib:libc.so* => NORETRY" "$PRESSURE" fill sd:4096 a:4096 sd:100
rp_expect "lib:libc.so* (strdup's caller is the program)" libc "sd 4096 $K;a 4096 $K;sd 100 $K"

rp_run foo "lib:libfoo* => NORETRY" "$PRESSURE" fill a:4096 b:4096 sd:4096 thr:4096
rp_expect "lib:libfoo*" foo "a 4096 $K;b 4096 $K;sd 4096 $K;thr 4096 $K"
