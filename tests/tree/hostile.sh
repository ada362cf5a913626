#!/bin/bash
# GFP_TREE naming what is not a tree's budget stops the process before main
# with exit 125 and one line saying what it is and what to do, as a bad
# GFP_POLICY does: a symbolic link (even to a real tree), a FIFO (never
# waited on), a directory, another user's file, a file others may read, a
# file that is no tree, a relative path; limit.scope=tree without a limit.
# Nothing is created where the name points. Under GFP_STRICT=0 it is a
# warning and the process runs with a budget of its own.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
POL='limit=64M;limit.scope=tree'

# refused NAME GFP_TREE EXPECTED_TAIL [POLICY]: exit 125, one error line,
# "GFP_TREE: 'GFP_TREE' EXPECTED_TAIL (unset GFP_TREE to start a new tree)".
refused() {
	local name=$1 tree=$2 tail=$3 pol=${4:-$POL} rc=0
	GFP_TREE=$tree GFP_POLICY=$pol LD_PRELOAD=$SHIM bounded 60 "$PROG" usage \
		>"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	[ $rc = 125 ] || { cat "$TMP/$name.err" >&2; fail "$name: exit $rc, expected 125"; }
	[ ! -s "$TMP/$name.out" ] || fail "$name: main ran: $(cat "$TMP/$name.out")"
	/usr/bin/python3 - "$TMP/$name.err" "$tree" "$tail" <<'PY' || fail "$name: the message"
import sys
err, tree, tail = sys.argv[1:4]
lines = open(err).read().splitlines()
want = "gfpshim: error: GFP_TREE: '%s' %s (unset GFP_TREE to start a new tree)" % (tree, tail)
if tail.startswith("="):
    want = "gfpshim: error: " + tail[1:]
assert lines == [want], "got %r\nwant %r" % (lines, [want])
PY
}

# A real tree to point a link at: one member holding it open.
mkfifo "$TMP/hold.fifo"
GFP_TREE=$TMP/real GFP_POLICY=$POL LD_PRELOAD=$SHIM "$PROG" hold 1024 <"$TMP/hold.fifo" >"$TMP/hold.out" &
hold_pid=$!
exec 3>"$TMP/hold.fifo"
wait_line "$TMP/hold.out" holding
seg_size=$(stat -c %s "$TMP/real")
ln -s "$TMP/real" "$TMP/link-real"
refused link-to-tree "$TMP/link-real" "is a symbolic link, not a tree's budget"
ln -s "$TMP/nothing" "$TMP/link-dangling"
refused link-dangling "$TMP/link-dangling" "is a symbolic link, not a tree's budget"
[ ! -e "$TMP/nothing" ] || fail "a dangling link's target was created"
exec 3>&-
wait $hold_pid || fail "the member holding the real tree exited $?"

mkfifo "$TMP/fifo"
refused fifo "$TMP/fifo" "is not a regular file (a FIFO), not a tree's budget"
mkdir "$TMP/dir"
refused dir "$TMP/dir" "is not a regular file (a directory), not a tree's budget"
echo 'not a tree' >"$TMP/text"
chmod 0644 "$TMP/text"
refused open-to-others "$TMP/text" "has mode 0644: other users could read or change the budget"
chmod 0600 "$TMP/text"
refused not-a-tree "$TMP/text" "is not a tree's budget of this gfpshim (11 bytes, one is $seg_size)"
refused relative "relative/tree" "is not an absolute path of a tree's budget"
if [ "$(id -u)" = 0 ]; then
	cp "$TMP/text" "$TMP/theirs"
	chown 65534 "$TMP/theirs"
	refused other-user "$TMP/theirs" "belongs to uid 65534, not to uid 0: only one user's processes share a budget"
else
	note "not root: another user's file is not tried"
fi
refused no-limit "" "=GFP_POLICY: limit.scope=tree shares a limit with the process's children: set limit=SIZE too" \
	'limit.scope=tree'

# No GFP_TREE and a /dev/shm that cannot take the tree's file (read-only
# here, in a mount namespace of the test's own: root only).
if unshare -m true 2>/dev/null; then
	rc=0
	unshare -m sh -c 'mount -t tmpfs -o ro none /dev/shm && exec "$@"' _ \
		env GFP_POLICY=$POL LD_PRELOAD=$SHIM "$PROG" usage >"$TMP/ro.out" 2>"$TMP/ro.err" || rc=$?
	expect_eq "a read-only /dev/shm: exit status" 125 "$rc"
	expect_eq "a read-only /dev/shm: the message" \
		"gfpshim: error: limit.scope=tree: cannot create the tree's budget in /dev/shm: Read-only file system (set GFP_TREE to a file path in a directory of yours)" \
		"$(cat "$TMP/ro.err")"
else
	note "no mount namespace: a read-only /dev/shm is not tried"
fi

# GFP_STRICT=0: a warning, and a budget of the process's own.
GFP_STRICT=0 GFP_TREE=$TMP/fifo GFP_POLICY=$POL LD_PRELOAD=$SHIM bounded 60 "$PROG" usage \
	>"$TMP/lax.out" 2>"$TMP/lax.err" || fail "GFP_STRICT=0: exit $?"
expect_contains "GFP_STRICT=0: the warning" "$TMP/lax.err" \
	"^gfpshim: warning: GFP_TREE: '$TMP/fifo' is not a regular file \(a FIFO\), not a tree's budget \(unset GFP_TREE to start a new tree\) \[ignored: GFP_STRICT=0\]$"
expect_eq "GFP_STRICT=0: the process's own limit" $((64 * MiB)) "$(field "$TMP/lax.out" usage limit)"
