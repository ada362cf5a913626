#!/bin/bash
# gfp_reserve(4M, KERNEL) under a full budget waits, however large (a
# reservation is never "costly"), until enough memory is freed: another
# thread frees 2M once the reservation has printed a canary (it waits: not
# enough) and 4M more once it has printed another after that. The
# reservation must return only after the second free (checked by the stage
# the freer had reached), and then hold its 4M back: the freer gets only the
# other 2M back until the unreserve.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

pol='limit=16M;wait=50ms;oom=wait;canary.ms=100ms'
RS_REPORT=1 rs_run br "$pol" "$TXN" block
rs_load br
want br "report: taken 1, failed 0, reserved_now 0" \
	"$(rs_report br taken) == 1 && $(rs_report br failed) == 0 && $(rs_report br reserved_now) == 0"
want br "the reservation (with stats) returned before the second free" \
	"br_reserve_rc == 0 && br_stage_at_return == 2"
rs_run b "$pol" "$TXN" block
rs_load b
want b "the reservation failed" "b_reserve_rc == 0"
want b "the reservation returned before the second free (stage $b_stage_at_return)" \
	"b_stage_at_return == 2"
expect_contains "canary while the reservation waits" "$TMP/b.log" \
	"possible memory allocation deadlock size $b_R in [^ ]+ after [0-9]+ rounds.*mode:KERNEL 0xcc0"
blocks=$((b_R / 4096))
want b "the freer refilled $b_refill blocks: the reservation must hold its 4M back" \
	"b_refill >= blocks / 2 - 1 && b_refill <= blocks / 2 + 1"
want b "after the unreserve the freer gets the 4M: $b_after_unreserve blocks" \
	"b_after_unreserve >= blocks - 1 && b_after_unreserve <= blocks + 1"
note "gfp_reserve(4M, KERNEL) returned after $b_reserve_ms ms: $b_after_free_ms ms after the free that made room"
note "canaries while it waited: $(grep -c 'possible memory allocation deadlock' "$TMP/b.log")"
