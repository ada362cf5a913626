#!/bin/bash
# reserve.thread=64K with reserve.prefault=1 maps and touches a reserve for
# every thread: 8 threads of an unmodified program (uthread rss 8) should
# cost about 8 x 64K of resident memory more than with the budget's
# accounting-only reserve, not megabytes each. The bound allows 1M a thread
# for jemalloc's arena metadata.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

rs_run pf 'reserve.thread=64K;reserve.prefault=1' "$UTHREAD" rss 8
rs_load pf
rs_run acc 'reserve.thread=64K;limit=64M' "$UTHREAD" rss 8
rs_load acc
per=$(((pf_rss_threads - pf_rss_before - (acc_rss_threads - acc_rss_before)) / 8))
main=$((pf_rss_before - acc_rss_before))
note "resident memory a thread adds with the prefaulted 64K reserve: $per bytes (the main thread's: $main)"
want pf "a thread's prefaulted 64K reserve costs $per bytes resident" "per <= 65536 + 1048576"
want pf "the main thread's prefaulted 64K reserve costs $main bytes resident" "main <= 65536 + 1048576"
