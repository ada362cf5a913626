#!/bin/bash
# memory.high throttles and never fails (mem_cgroup_handle_over_high), in a
# cgroup v2 of memory.max 64 MiB and memory.high 16 MiB (a directory of
# v2-format files: see v2.sh). 4 threads take 17 MiB in 64 KiB blocks: every
# request succeeds, and the stall past memory.high shows in the report:
# memory_events' high (reclaim past it) and memory_high's sleeps (the
# penalty slept), while nothing met memory.max. NOWAIT requests past
# memory.high succeed too and never sleep: the penalty is left for a
# request that may block. (On the old code limit=cgroup took
# min(memory.max, memory.high) as a hard limit: NULL at 16 MiB.)
source "$TESTS/lib.sh"
source "$TESTS/cgroup/v2.sh"

v2_dir high $((64 * MiB)) $((16 * MiB))
v2_run threads 'limit=cgroup' "$MEMCG_PROG" fill KERNEL 65536 $((17 * MiB)) 4
[ "$STATUS" = 0 ] || { show threads; fail "threads: status $STATUS"; }
check threads "o['nulls'] == 0 and o['total'] == $((17 * MiB))" "every request past memory.high succeeds"
check threads "r['policy']['limit'] == 'cgroup'" "the report's limit"
check threads "r['memory_events']['high'] >= 1" "memory.events' high counts the reclaim past memory.high"
check threads "r['memory_high']['sleeps'] >= 1 and r['memory_high']['delay_us'] > 0" "the penalty was slept"
check threads "r['memory_events']['max'] == 0 and r['memory_events']['oom'] == 0" "nothing met memory.max"
check threads "'allocation failure' not in log" "no failure report"
note "4 threads past memory.high: $(py threads r[\'memory_events\']) $(py threads r[\'memory_high\'])"

v2_run nowait 'limit=cgroup;default=NOWAIT' "$MEMCG_PROG" fill NOWAIT 65536 $((17 * MiB))
[ "$STATUS" = 0 ] || { show nowait; fail "nowait: status $STATUS"; }
check nowait "o['nulls'] == 0 and o['total'] == $((17 * MiB))" "NOWAIT requests past memory.high succeed"
check nowait "r['memory_high']['sleeps'] == 0" "NOWAIT requests never sleep"
