#!/bin/bash
# gfp-ctl on a tree's budget: every member listens on its own socket
# (ctl=1), and `set limit=` through any of them changes the tree's limit.
# A holds 20 MiB of a 32M tree; B's 16 MiB request is refused. Raised to
# 64M through A, B's `get limit` says so and B's next 16 MiB are served.
# Lowered to 40M through B, A's `get limit` says so and B's 8 MiB more are
# refused (20 + 16 + 8 > 40). limit.scope cannot change at run time.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"
GFP_CTL=$BUILD/tools/gfp-ctl
mkdir -m 0700 "$TMP/xdg" || fail "mkdir $TMP/xdg"
export XDG_RUNTIME_DIR=$TMP/xdg
export GFP_TREE=$TMP/tree GFP_POLICY='limit=32M;limit.scope=tree;ctl=1'

member_start A hold $((20 * MiB))
mkfifo "$TMP/B.fifo"
LD_PRELOAD=$SHIM "$PROG" tries <"$TMP/B.fifo" >"$TMP/B.out" 2>"$TMP/B.err" &
b_pid=$!
exec {b_in}>"$TMP/B.fifo"
a_pid=${MEMBER_PID[A]}

# try N: B mallocs N bytes; prints ok (true/false) of its answer.
try() {
	local n i
	n=$(($(grep -c '"event":"try"' "$TMP/B.out") + 1))
	echo "$1" >&$b_in
	for ((i = 0; i < 400; i++)); do
		[ "$(grep -c '"event":"try"' "$TMP/B.out")" -ge $n ] && break
		sleep 0.05
	done
	field "$TMP/B.out" try ok $n
}
# ctl PID ARGS...: gfp-ctl's output, which must exit 0.
ctl() {
	"$GFP_CTL" "$@" >"$TMP/ctl.out" 2>"$TMP/ctl.err" ||
		{ cat "$TMP/ctl.err" >&2; fail "gfp-ctl $* exited $?"; }
	cat "$TMP/ctl.out"
}

expect_eq "B's 16 MiB in a 32M tree where A holds 20 MiB" false "$(try $((16 * MiB)))"
expect_eq "set limit=64M through A" ok "$(ctl "$a_pid" set limit=64M)"
expect_eq "B's limit after A's set" "limit=$((64 * MiB))" "$(ctl "$b_pid" get limit)"
expect_eq "B's 16 MiB in the 64M tree" true "$(try $((16 * MiB)))"
expect_eq "the limit B's gfp_budget_usage() sees" $((64 * MiB)) "$(field "$TMP/B.out" try limit 2)"
expect_eq "set limit=40M through B" ok "$(ctl "$b_pid" set limit=40M)"
expect_eq "A's limit after B's set" "limit=$((40 * MiB))" "$(ctl "$a_pid" get limit)"
expect_eq "B's 8 MiB more in the 40M tree" false "$(try $((8 * MiB)))"
expect_eq "the limit B sees after its own set" $((40 * MiB)) "$(field "$TMP/B.out" try limit 3)"

rc=0
"$GFP_CTL" "$a_pid" set limit.scope=process >"$TMP/scope.out" 2>&1 || rc=$?
expect_eq "set limit.scope: exit status" 1 "$rc"
expect_contains "set limit.scope: the reason" "$TMP/scope.out" \
	"not applied at run time: limit.scope cannot change at run time"

exec {b_in}>&-
wait $b_pid || fail "B exited $?"
member_end A
