#!/bin/bash
# A member in a time namespace of its own (unshare --time --boottime), in
# the same PID namespace as the others: /proc shifts a process's start
# time by the reader's time namespace, so the start time A read for itself
# is not the one B reads for A. A holds 40 MiB of a 64M tree (oom=fail); B,
# outside A's time namespace, gets less than its 40 MiB. B used to take A,
# its pid alive with "another" start time, for a dead member whose pid was
# reused, and got its 40 MiB.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"
need_prog unshare
unshare --time --fork --boottime 100000 true 2>/dev/null ||
	skip "unshare --time fails here (a kernel before 5.6, or no privilege)"
trap 'members_kill; rm -rf "$TMP"' EXIT

export GFP_TREE=$TMP/tree GFP_POLICY='limit=64M;limit.scope=tree;oom=fail;retries=4;wait=5ms'
MEMBER_WRAP=(unshare --time --fork --boottime 100000)
member_start A hold $((40 * MiB))
MEMBER_WRAP=()
member_start B hold $((40 * MiB))
expect_eq "A's 40 MiB" $((40 * MiB)) "$(field "$TMP/A.out" holding bytes)"
b=$(field "$TMP/B.out" holding bytes)
[ "$b" -lt $((40 * MiB)) ] || fail "B got its 40 MiB while A, in a time namespace, holds 40 MiB of the 64M tree"
member_end B
member_end A
note "A in a time namespace holds 40 MiB; B got $b bytes"
