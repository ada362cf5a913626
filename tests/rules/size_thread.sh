#!/bin/bash
# size>/size< (with K/M suffixes) are looked at per request against the
# site's cached answer, and '&' needs every matcher: 'sym:caller_b &
# size>8K' takes caller_b's 16K request only, not its 4K ones before and
# after nor caller_a's 16K. thread:GLOB matches the thread's name (the
# worker names itself before it allocates): only its requests.
source "$TESTS/lib.sh"
source "$TESTS/rules/rules.sh"

K='KERNEL oom' N='KERNEL|NORETRY noretry'
rp_run and "sym:caller_b & size>8K => NORETRY" "$PRESSURE" fill b:4096 b:16K a:16K b:4096
rp_expect "sym:caller_b & size>8K" and "b 4096 $K;b 16384 $N;a 16384 $K;b 4096 $K"

# Above costly= (32K) every request fails after one round: the flags tell.
rp_run big "sym:caller_b & size>64K => NORETRY" "$PRESSURE" fill b:100K a:100K b:64K
rp_expect "sym:caller_b & size>64K" big \
	"b 102400 KERNEL|NORETRY noretry;a 102400 KERNEL costly;b 65536 KERNEL costly"

rp_run lt "size<1K => NORETRY" "$PRESSURE" fill a:512 a:4096 b:1023 b:1K
rp_expect "size<1K" lt "a 512 $N;a 4096 $K;b 1023 $N;b 1024 $K"

rp_run mega "size>1M => NORETRY" "$PRESSURE" fill a:1024K a:1025K
rp_expect "size>1M" mega "a 1048576 KERNEL costly;a 1049600 KERNEL|NORETRY noretry"

rp_run thr "thread:work* => NORETRY" "$PRESSURE" fill a:4096 thr:4096 b:4096 thr:100
rp_expect "thread:work*" thr "a 4096 $K;thr 4096 $N;b 4096 $K;thr 100 $N"

# The same, a rule a line, the thread's rule second.
rp_run thr_lines "$(printf 'size>1M => RETRY_MAYFAIL\nthread:work* => NORETRY\n')" "$PRESSURE" \
	fill a:4096 thr:4096 b:4096 thr:100
rp_expect "thread:work*, a rule a line" thr_lines "a 4096 $K;thr 4096 $N;b 4096 $K;thr 100 $N"

rp_run main "thread:rules_prog & sym:xmalloc => NORETRY" "$PRESSURE" fill a:4096 thr:4096
rp_expect "thread:rules_prog (the main thread)" main "a 4096 $N;thr 4096 $K"
