#!/bin/bash
# OOM victims across the tree, as the kernel's oom_badness picks them: two
# members hold 32 MiB (A) and 20 MiB (B) of a 64M tree; a third (C) needs
# 12 MiB in 4 KiB requests, which loop once the tree is full and reach the
# OOM step. The victim is the member with the most live bytes (A), killed
# by SIGKILL; C waits for A's memory and then gets its 12 MiB; B lives on.
# With oom_score_adj=600 on B (points = live + 600 * limit / 1000: 20 MiB
# + 38.4 MiB), B is the victim instead. C's report reads like the kernel's:
# "invoked oom-killer", the tree's members as a task dump ([  pid  ]
# threads live charged oom_score_adj name), "Out of memory: Killed process"
# with the victim's share, and the oom_reaper line once its memory is back.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"

# case NAME ADJ_B EXPECTED_VICTIM(A|B)
oom_case() {
	local name=$1 adj_b=$2 victim=$3
	export GFP_TREE=$TMP/$name.tree GFP_POLICY='limit=64M;limit.scope=tree;retries=4;wait=5ms;oom.victim_timeout=60s'
	member_start "$name-A" hold $((32 * MiB)) 0
	member_start "$name-B" hold $((20 * MiB)) "$adj_b"
	bounded 60 env LD_PRELOAD=$SHIM "$PROG" need $((12 * MiB)) </dev/null \
		>"$TMP/$name-C.out" 2>"$TMP/$name-C.err" ||
		{ cat "$TMP/$name-C.err" >&2; fail "$name: the member that needs 12 MiB exited $?"; }
	local c_pid
	c_pid=$(field "$TMP/$name-C.out" got pid)
	expect_eq "$name: C's 12 MiB" $((12 * MiB)) "$(field "$TMP/$name-C.out" got bytes)"
	local killed=$victim spared=A
	[ "$victim" = A ] && spared=B
	member_expect_killed "$name-$killed"
	member_end "$name-$spared"
	/usr/bin/python3 "$TESTS/tree/oom_report.py" "$TMP/$name-C.err" \
		--requester "$c_pid" --victim "${MEMBER_PID[$name-$killed]}" \
		--members "${MEMBER_PID[$name-A]},${MEMBER_PID[$name-B]},$c_pid" \
		--victim-live-mib "$([ "$victim" = A ] && echo 32 || echo 20)" \
		--victim-adj "$([ "$victim" = A ] && echo 0 || echo "$adj_b")" ||
		fail "$name: C's OOM report"
	[ ! -e "$GFP_TREE" ] || fail "$name: the segment is still there after the last member ended"
	unset GFP_TREE GFP_POLICY
}

oom_case most_live 0 A
oom_case adj_600 600 B
