#!/bin/bash
# A member killed in its PID namespace gives its bytes back to members in
# other namespaces. A, B and C are each pid 2 of a namespace of their own
# (bash its init), in a 64M tree (oom=fail): A and B hold 24 MiB each, so
# C's malloc of 24 MiB fails. Once A is killed (SIGKILL) its bytes come
# back - the lock it held on its slot went with it - and C's next malloc
# of 24 MiB succeeds, the tree counting B and C alone. Twice: A alone, and
# A with a forked child (a member) that lives on after A is killed: the
# child maps the tree through a file description of its own, so A's lock
# goes with A. Each being "pid 2", C used to take A and B for dead members
# at once (their pid there, with other start times in C's /proc): its
# first malloc succeeded, 72 MiB live in the 64M tree.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"
need_pidns
trap 'members_kill; rm -rf "$TMP"' EXIT

for a_mode in hold holdfork; do
	export GFP_TREE=$TMP/$a_mode.tree GFP_POLICY='limit=64M;limit.scope=tree;oom=fail;retries=4;wait=5ms'
	MEMBER_WRAP=("${NS_INIT[@]}")
	member_start "A$a_mode" "$a_mode" $((24 * MiB))
	member_start "B$a_mode" hold $((24 * MiB))
	member_spawn "C$a_mode" tries
	MEMBER_WRAP=()
	c=$TMP/C$a_mode.out
	member_say "C$a_mode" $((24 * MiB))
	wait_lines "$c" try 1
	expect_eq "$a_mode: C's 24 MiB while A and B hold 24 MiB each" false "$(field "$c" try ok 1)"
	a_pid=$(member_host_pid "A$a_mode") || fail "$a_mode: no pid of A"
	kids=$(cat "/proc/$a_pid/task/$a_pid/children")
	kill -KILL "$a_pid"
	wait_dead "$a_pid"
	member_say "C$a_mode" $((24 * MiB))
	wait_lines "$c" try 2
	expect_eq "$a_mode: C's 24 MiB once A was killed" true "$(field "$c" try ok 2)"
	live=$(field "$c" try tree_live 2)
	[ "$live" -ge $((48 * MiB)) ] && [ "$live" -lt $((56 * MiB)) ] ||
		fail "$a_mode: the tree with B and C holding 24 MiB each: $live bytes"
	if [ "$a_mode" = holdfork ]; then
		[ -n "$kids" ] && kill -0 "$kids" || fail "A's child ($kids) did not outlive A"
	fi
	member_expect_killed "A$a_mode"
	note "$a_mode: after A's SIGKILL C got 24 MiB; the tree holds $live bytes"
	member_end "C$a_mode"
	member_end "B$a_mode"
done
