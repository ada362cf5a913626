#!/bin/bash
# A tree's name outlives a member killed last: the segment stays behind (no
# member left to remove it), and the next process that names it starts the
# tree again - the dead member's bytes are not counted, the new process's
# limit is the tree's - and removes it as the last member to leave. A
# process that joins a live tree with another limit= is told so, and the
# tree's limit applies. A tree named by nobody gets a name of its own in
# /dev/shm, mode 0600, removed when its last member ends - also when that
# member ends by _exit (dash does), and, when it was killed, by the next
# tree made by the same user 10 s or more later.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"

export GFP_TREE=$TMP/seg
GFP_POLICY='limit=32M;limit.scope=tree' member_start dead hold $((8 * MiB))
kill -KILL "${MEMBER_PID[dead]}"
member_expect_killed dead
[ -f "$GFP_TREE" ] || fail "the segment of a tree whose last member was killed is gone"

# The same program with a budget of its own: what it holds alone.
GFP_TREE= GFP_POLICY='limit=64M' LD_PRELOAD=$SHIM "$PROG" usage >"$TMP/alone.out" ||
	fail "usage alone exited $?"
GFP_POLICY='limit=64M;limit.scope=tree' LD_PRELOAD=$SHIM "$PROG" usage >"$TMP/stale.out" 2>"$TMP/stale.err" ||
	fail "usage in the stale tree exited $?"
[ ! -s "$TMP/stale.err" ] || fail "joining a stale tree said: $(cat "$TMP/stale.err")"
expect_eq "the stale tree's live bytes (the dead member's are not counted)" \
	"$(field "$TMP/alone.out" usage tree_live)" "$(field "$TMP/stale.out" usage tree_live)"
expect_eq "the restarted tree's limit" $((64 * MiB)) "$(field "$TMP/stale.out" usage limit)"
[ ! -e "$GFP_TREE" ] || fail "the last member of the restarted tree left its segment behind"

# A live tree keeps its limit; a member that asks for another is told.
GFP_POLICY='limit=32M;limit.scope=tree' member_start keeper hold $((1 * MiB))
GFP_POLICY='limit=64M;limit.scope=tree' LD_PRELOAD=$SHIM "$PROG" usage >"$TMP/join.out" 2>"$TMP/join.err" ||
	fail "usage in a live tree exited $?"
expect_eq "the joining member's limit" $((32 * MiB)) "$(field "$TMP/join.out" usage limit)"
expect_eq "the joining member's warning" \
	"gfpshim: warning: limit=64.0 MiB: the tree (GFP_TREE='$GFP_TREE') has limit=32.0 MiB, which applies (gfp-ctl set limit= through any member changes it)" \
	"$(cat "$TMP/join.err")"
member_end keeper
[ ! -e "$GFP_TREE" ] || fail "the segment is still there after the last member ended"

# No GFP_TREE: a name of the tree's own, exported to the children.
unset GFP_TREE
GFP_POLICY='limit=32M;limit.scope=tree' LD_PRELOAD=$SHIM bash -c \
	'stat -c "{\"event\":\"seg\",\"path\":\"%n\",\"mode\":\"%a\",\"uid\":%u}" "$GFP_TREE"' >"$TMP/own.out" ||
	fail "a tree of its own: exit $?"
seg=$(field "$TMP/own.out" seg path)
[[ "$seg" == /dev/shm/gfpshim-tree.$(id -u).* ]] || fail "the tree's own name is '$seg'"
expect_eq "its mode" 600 "$(field "$TMP/own.out" seg mode)"
expect_eq "its owner" "$(id -u)" "$(field "$TMP/own.out" seg uid)"
[ ! -e "$seg" ] || fail "$seg is still there after the tree ended"

# The last member ends by _exit (dash's exit): the file goes all the same.
GFP_POLICY='limit=32M;limit.scope=tree' LD_PRELOAD=$SHIM /bin/dash -c 'echo "$GFP_TREE"' >"$TMP/dash.out" ||
	fail "dash exited $?"
seg=$(cat "$TMP/dash.out")
[ -n "$seg" ] || fail "dash did not get GFP_TREE"
[ ! -e "$seg" ] || fail "$seg is still there after dash, its last member, ended by _exit"

# A tree of its own whose only member was killed stays behind, until a new
# tree of the same user, 10 s later, finds nobody in it.
GFP_POLICY='limit=32M;limit.scope=tree' LD_PRELOAD=$SHIM bash -c 'echo "$GFP_TREE"; kill -KILL $$' \
	>"$TMP/killed.out" 2>/dev/null
seg=$(cat "$TMP/killed.out")
[ -f "$seg" ] || fail "the killed tree's file '$seg' is not there"
GFP_POLICY='limit=32M;limit.scope=tree' LD_PRELOAD=$SHIM "$PROG" usage >/dev/null || fail "usage exited $?"
[ -f "$seg" ] || fail "a tree made at once removed $seg, under 10 s old"
touch -d '-1 minute' "$seg"
GFP_POLICY='limit=32M;limit.scope=tree' LD_PRELOAD=$SHIM "$PROG" usage >/dev/null || fail "usage exited $?"
[ ! -e "$seg" ] || { rm -f "$seg"; fail "a new tree left the stale $seg behind"; }
