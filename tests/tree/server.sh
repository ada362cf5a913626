#!/bin/bash
# A forking server of our own: the parent holds 4 MiB and forks 12 workers
# that allocate (1 MiB blocks, or 256 KiB blocks without end). A third end
# by exit(), a third by _exit() (no destructor: found gone by the slow
# path), a third are killed with SIGKILL while they allocate. While they run
# the tree counts their bytes; once the killed ones are zombies (their
# memory back with the kernel, not reaped yet) and once they are reaped,
# the tree's live bytes are the parent's own again, to the byte.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"

for pol in 'limit=1G;limit.scope=tree' 'limit=1G;limit.scope=tree;stats=sites'; do
	GFP_POLICY=$pol LD_PRELOAD=$SHIM timeout 60 "$PROG" server 12 >"$TMP/out" 2>"$TMP/err" ||
		{ cat "$TMP/out" "$TMP/err" >&2; fail "$pol: tree_prog server exited $?"; }
	expect_eq "$pol: workers killed" 4 "$(field "$TMP/out" server killed)"
	expect_eq "$pol: killed workers seen dying by SIGKILL" 4 "$(field "$TMP/out" server signalled)"
	expect_eq "$pol: workers that ended by exit() or _exit()" 8 "$(field "$TMP/out" server exited)"
	before=$(field "$TMP/out" server before)
	during=$(field "$TMP/out" server during)
	# 12 workers, each at least 3 blocks in: 8 x 3 MiB and 4 x 768 KiB at least.
	[ $((during - before)) -ge $((8 * 3 * MiB + 4 * 3 * 256 * 1024)) ] ||
		fail "$pol: while the workers allocated the tree grew by only $((during - before)) bytes"
	expect_eq "$pol: the tree with the killed workers zombies" "$before" "$(field "$TMP/out" server zombies)"
	expect_eq "$pol: the tree once every worker is reaped" "$before" "$(field "$TMP/out" server after)"
	note "$pol: parent $before, with the workers $during, after $(field "$TMP/out" server after)"
done
