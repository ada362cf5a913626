#!/bin/bash
# A rule's context is decided when it matters, not only for failing
# requests: near the watermark a rule's HIGH or ATOMIC lets caller_a use
# part of the reserve that caller_b may not touch, and with
# fail.ignore_wait=1 a rule's NOWAIT makes caller_a's requests eligible for
# injection while the sleeping ones (caller_b, explicit GFP_KERNEL) are not.
source "$TESTS/lib.sh"
source "$TESTS/rules/rules.sh"

for f in HIGH ATOMIC; do
	rp_run $f "sym:caller_a => $f" "$PRESSURE" fill a:4096 b:4096 a:4096
	rp_expect_out "sym:caller_a => $f at the watermark" $f "a:4096=ok b:4096=null a:4096=ok"
	rp_expect "sym:caller_a => $f, failures" $f "b 4096 KERNEL oom"
done

INJ='fail.probability=1;fail.ignore_wait=1'
rp_run inj "sym:caller_a => NOWAIT" "$INJ" nofill a:4096 b:4096 ga:100 a:100 thr:100
rp_expect_out "sym:caller_a => NOWAIT under fail.ignore_wait=1" inj \
	"a:4096=null b:4096=ok ga:100=ok a:100=null thr:100=ok"
rp_expect "sym:caller_a => NOWAIT, injections" inj "a 4096 NOWAIT -;a 100 NOWAIT -" injection

rp_run injthr "thread:worker => NOWAIT" "$INJ" nofill a:4096 thr:100 b:100
rp_expect_out "thread:worker => NOWAIT under fail.ignore_wait=1" injthr \
	"a:4096=ok thr:100=null b:100=ok"
rp_expect "thread:worker => NOWAIT, injections" injthr "thr 100 NOWAIT -" injection
