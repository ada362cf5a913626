#!/bin/bash
# Members in PID namespaces of their own (unshare --pid --fork --mount-proc:
# each is pid 1 of its namespace, with that namespace's /proc) share one
# budget as any two members do. A holds 40 MiB of a 64M tree; B, in
# another namespace, wants 40 MiB too:
# - oom=fail: once the tree is full B's 256 KiB requests fail (NULL): it
#   gets less than 40 MiB, A and B together stay under the limit, and B's
#   view of the tree counts A's bytes;
# - oom=kill (B needs 40 MiB in 4 KiB requests): B's OOM step may only
#   choose a member it can prove is that member, and A is in a namespace B
#   cannot see into, so B is its own victim; being its namespace's init,
#   which the kernel does not let SIGKILL itself, it ends with status 137.
#   A lives on with its 40 MiB;
# - A closes every descriptor above 2 once it holds its 40 MiB (closefrom,
#   as daemons do), the shim's among them, and then only waits: B still
#   cannot get its 40 MiB (A's lock lives on in its mapping of the tree);
# - Debian's python3, each in a namespace of its own: while the first holds
#   a 40 MiB bytearray, the second's is a MemoryError.
# Both members being "pid 1", B used to take A for a dead member (its pid
# there, with another start time in B's /proc) and give its bytes back.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"
need_pidns
trap 'members_kill; rm -rf "$TMP"' EXIT

export GFP_TREE=$TMP/fail.tree GFP_POLICY='limit=64M;limit.scope=tree;oom=fail;retries=4;wait=5ms'
member_start_ns A hold $((40 * MiB))
member_start_ns B hold $((40 * MiB))
expect_eq "A's pid in its namespace" 1 "$(field "$TMP/A.out" holding pid)"
expect_eq "B's pid in its namespace" 1 "$(field "$TMP/B.out" holding pid)"
a=$(field "$TMP/A.out" holding bytes)
b=$(field "$TMP/B.out" holding bytes)
expect_eq "A's 40 MiB" $((40 * MiB)) "$a"
[ "$b" -lt $((40 * MiB)) ] || fail "B got its 40 MiB while A holds 40 MiB of the 64M tree"
[ $((a + b)) -le $((64 * MiB)) ] || fail "A and B hold $((a + b)) bytes of a 64M tree"
b_tree=$(field "$TMP/B.out" holding tree_live)
[ "$b_tree" -ge $((a + b)) ] && [ "$b_tree" -le $((64 * MiB)) ] ||
	fail "B's view of the tree: $b_tree bytes, with A $a and B $b of a 64M tree"
expect_contains "B's failure report" "$TMP/B.err" 'allocation failure: size:262144'
note "oom=fail: A $a, B $b bytes; B sees $b_tree in the tree"
member_end B
member_end A
[ ! -e "$GFP_TREE" ] || fail "the segment is still there after the last member ended"

export GFP_TREE=$TMP/kill.tree GFP_POLICY='limit=64M;limit.scope=tree;retries=4;wait=5ms;oom.victim_timeout=60s'
member_start_ns Ak hold $((40 * MiB))
rc=0
bounded 60 unshare --pid --fork --kill-child --mount-proc env LD_PRELOAD="$SHIM" \
	"$PROG" need $((40 * MiB)) </dev/null >"$TMP/Bk.out" 2>"$TMP/Bk.err" || rc=$?
[ "$rc" = 137 ] || { cat "$TMP/Bk.out" "$TMP/Bk.err" >&2; fail "B exited $rc, expected 137 (its own victim)"; }
expect_contains "B's report" "$TMP/Bk.err" \
	'^gfpshim: error: Out of memory: Killed process 1 \(tree_prog\) live:'
a_pid=$(member_host_pid Ak) || fail "no pid of A"
kill -0 "$a_pid" || fail "A is gone: B's OOM step reached it"
member_end Ak
note "oom=kill: B, its own victim, ended with 137; A lived on"

export GFP_TREE=$TMP/closed.tree GFP_POLICY='limit=64M;limit.scope=tree;oom=fail;retries=4;wait=5ms'
member_start_ns Ac holdc $((40 * MiB))
member_start_ns Bc hold $((40 * MiB))
b=$(field "$TMP/Bc.out" holding bytes)
[ "$b" -lt $((40 * MiB)) ] || fail "B got its 40 MiB while A, its descriptors closed, holds 40 MiB"
member_end Bc
member_end Ac
note "A with its descriptors closed: B got $b bytes"

need_prog /usr/bin/python3
export GFP_TREE=$TMP/py.tree GFP_POLICY='limit=64M;limit.scope=tree'
MEMBER_WRAP=("${NS[@]}")
MEMBER_PROG=/usr/bin/python3 member_spawn py1 -c '
import sys
b = bytearray(40 * 2**20)
print("{\"event\":\"holding\"}", flush=True)
sys.stdin.readline()'
MEMBER_WRAP=()
wait_line "$TMP/py1.out" holding
bounded 60 "${NS[@]}" env LD_PRELOAD="$SHIM" /usr/bin/python3 -c '
try:
    b = bytearray(40 * 2**20)
    print("ok")
except MemoryError:
    print("MemoryError")
' >"$TMP/py2.out" 2>"$TMP/py2.err" || fail "the second python3 exited $?"
expect_eq "the second python3, in another namespace, while the first holds 40 MiB" \
	MemoryError "$(cat "$TMP/py2.out")"
member_end py1
note "python3 in two namespaces: the second's 40 MiB is a MemoryError"
