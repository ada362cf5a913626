#!/bin/bash
# A reservation holds against requests that were let through early: while
# the worker holds 4M, one thread makes a single malloc far from the
# watermark, a second thread fills the budget to the lowered watermark, then
# the first thread mallocs until NULL. The budget is full: the first thread
# must get nothing more, and the worker must still get all of its 4M.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

rs_run l 'limit=16M;oom=fail;retries=2;wait=1ms;warn.burst=1' "$TXN" late
rs_load l
note "early request $l_first, fill $l_filled, late requests got $l_late, the worker got $l_got of $l_expected"
want l "the reservation failed" "l_reserve_rc == 0"
want l "a thread got $l_late blocks past the full budget: an earlier grant of the fast path outlived the fill" \
	"l_late == 0"
want l "the worker got $l_got of its $l_expected reserved blocks" "l_got == l_expected"
