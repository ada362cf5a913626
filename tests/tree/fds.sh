#!/bin/bash
# The shim never takes a lock on a file of the program's. A member puts a
# file of its own where the shim's descriptor of the tree's file was (as a
# program that closes what it did not open, then opens, would get that
# number) and forks; its child, a member, allocates. Nobody holds a lock on
# the program's file. The child used to take its slot's locks through the
# number it inherited, the program's file by then.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"

export GFP_TREE=$TMP/tree GFP_POLICY='limit=64M;limit.scope=tree'
rc=0
bounded 60 env LD_PRELOAD="$SHIM" "$PROG" forkx >"$TMP/out" 2>"$TMP/err" || rc=$?
[ $rc = 0 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "tree_prog forkx exited $rc"; }
expect_eq "a lock on the program's file in the shim's old place" false "$(field "$TMP/out" forkx locked)"
[ ! -e "$GFP_TREE" ] || fail "the segment is still there after the last member ended"
note "the program's file at descriptor $(field "$TMP/out" forkx fd): no lock"
