#!/bin/bash
# A reservation in one member is held back from every member: A reserves
# 24 MiB of a 64M tree (gfp_reserve), and B's 48 MiB request is refused
# (64 MiB - min_free - 24 MiB < 48 MiB) where 32 MiB is served; B's
# gfp_budget_usage() shows A's reservation. Once A has given it back and
# ended, B's 16 MiB more are served (32 + 16 < 64 - min_free).
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"
export GFP_TREE=$TMP/tree GFP_POLICY='limit=64M;limit.scope=tree'

mkfifo "$TMP/A.fifo"
(exec env LD_PRELOAD="$SHIM" "$PROG" reserve $((24 * MiB))) <"$TMP/A.fifo" >"$TMP/A.out" 2>"$TMP/A.err" &
a_pid=$!
exec {a_in}>"$TMP/A.fifo"
wait_line "$TMP/A.out" reserved
expect_eq "A's gfp_reserve" 0 "$(field "$TMP/A.out" reserved rc)"
expect_eq "the tree's reserved bytes A sees" $((24 * MiB)) "$(field "$TMP/A.out" reserved reserved)"
printf '%s\n' $((48 * MiB)) $((32 * MiB)) >"$TMP/B1.in"
env LD_PRELOAD="$SHIM" "$PROG" tries <"$TMP/B1.in" >"$TMP/B.out" 2>"$TMP/B.err" || fail "B exited $?"
expect_eq "B's 48 MiB beside A's 24 MiB reservation" false "$(field "$TMP/B.out" try ok 1)"
expect_eq "B's 32 MiB beside it" true "$(field "$TMP/B.out" try ok 2)"
expect_eq "the tree's reserved bytes B sees" $((24 * MiB)) "$(field "$TMP/B.out" try reserved 1)"
exec {a_in}>&-
wait $a_pid || fail "A exited $?"
printf '%s\n' $((32 * MiB)) $((16 * MiB)) >"$TMP/B2.in"
env LD_PRELOAD="$SHIM" "$PROG" tries <"$TMP/B2.in" >"$TMP/B2.out" 2>"$TMP/B2.err" || fail "B exited $?"
expect_eq "32 MiB and 16 MiB once A is gone" "true true" \
	"$(field "$TMP/B2.out" try ok 1) $(field "$TMP/B2.out" try ok 2)"
expect_eq "the tree's reserved bytes once A is gone" 0 "$(field "$TMP/B2.out" try reserved 2)"
