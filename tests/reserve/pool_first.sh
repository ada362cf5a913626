#!/bin/bash
# reserve.mode=tokens with reserve.prefault=1: a reservation's prefaulted
# pool serves its thread's requests first, with a budget and without one
# (without one the requests took the plain path straight to jemalloc and
# never met the pool). watermark mode is the control: jemalloc serves first.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"
PROG=$BUILD/tests/reserve/pool_first

while read -r tag policy want; do
	rs_run "$tag" "$policy" "$PROG"
	[ "$RS_RC" = 0 ] || { rs_show "$tag"; fail "$tag: status $RS_RC"; }
	expect_eq "$tag ($policy)" "pool=$want" "$(cat "$TMP/$tag.out")"
	note "$tag: $(cat "$TMP/$tag.out")"
done <<'CASES'
tokens reserve.mode=tokens;reserve.prefault=1 4/4
tokens_budget limit=64M;reserve.mode=tokens;reserve.prefault=1 4/4
watermark reserve.prefault=1 0/4
CASES
