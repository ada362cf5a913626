#!/bin/bash
# Two members, each pid 1 of a PID namespace of its own, start at once and
# allocate from 4 threads each: 40 MiB each in 256 KiB blocks, under
# limit=64M;oom=fail. Whatever the race, what they hold together stays
# under the limit (each thread stops at its first NULL), and between them
# they fill most of it. Both being "pid 1", each used to take the other for a dead member.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"
need_pidns
trap 'members_kill; rm -rf "$TMP"' EXIT

export GFP_TREE=$TMP/tree GFP_POLICY='limit=64M;limit.scope=tree;oom=fail;retries=4;wait=5ms'
for run in 1 2 3; do
	MEMBER_WRAP=("${NS[@]}")
	member_spawn "A$run" thold 4 $((40 * MiB))
	member_spawn "B$run" thold 4 $((40 * MiB))
	MEMBER_WRAP=()
	wait_line "$TMP/A$run.out" holding 60
	wait_line "$TMP/B$run.out" holding 60
	a=$(field "$TMP/A$run.out" holding bytes)
	b=$(field "$TMP/B$run.out" holding bytes)
	[ $((a + b)) -le $((64 * MiB)) ] || fail "run $run: A and B hold $((a + b)) bytes of a 64M tree"
	[ $((a + b)) -ge $((48 * MiB)) ] || fail "run $run: A and B hold only $((a + b)) bytes of a 64M tree"
	for m in A B; do
		t=$(field "$TMP/$m$run.out" holding tree_live)
		own=$(field "$TMP/$m$run.out" holding bytes)
		[ "$t" -ge "$own" ] && [ "$t" -le $((64 * MiB)) ] ||
			fail "run $run: $m's view of the tree is $t bytes, with A $a and B $b in a 64M tree"
	done
	note "run $run: A $a, B $b bytes"
	member_end "A$run"
	member_end "B$run"
done
