#!/bin/bash
# thread:GLOB reads the thread's name once, at the thread's first rule
# evaluation, and rules are evaluated only when the context is needed (the
# slow path, injection, a budget near its watermark). The thread "late"
# makes one 1000-byte request far from the watermark (limit=64M, nearly
# empty) before it names itself: that request needs no context, so when
# the budget is full its next request is the first to look at its name,
# "late", and 'thread:late => NORETRY' takes it.
source "$TESTS/lib.sh"
source "$TESTS/rules/rules.sh"

P='limit=64M;oom=fail;retries=2;wait=1ms;warn.burst=0'
rp_run late "thread:late => NORETRY" "$P" fill a:4096 late:4096 thr:4096
rp_expect "thread:late, named after a request far from the watermark" late \
	"a 4096 KERNEL oom;late 4096 KERNEL|NORETRY noretry;thr 4096 KERNEL oom"
