#!/bin/bash
# A forking server of our own: the parent holds 4 MiB and forks 12 workers
# that allocate (1 MiB blocks, or 256 KiB blocks without end). A quarter
# end by exit(), a quarter by _exit() (no destructors: the shim's _exit
# leaves for them), a quarter by a raw exit_group system call and a
# quarter are killed with SIGKILL while they allocate (both found gone by
# the slow path and gfp_budget_usage()). While they run the tree counts
# their bytes: the workers that end hold all 16 of their blocks until the
# server has counted them, however loaded the machine (they used to end on
# their own, some before the count on a loaded one). Once the killed ones
# are zombies (their memory back with the kernel, not reaped yet) and once
# they are reaped, the tree's live bytes are the parent's own again, to the
# byte.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"

for pol in 'limit=1G;limit.scope=tree' 'limit=1G;limit.scope=tree;stats=sites'; do
	GFP_POLICY=$pol LD_PRELOAD=$SHIM bounded 60 "$PROG" server 12 >"$TMP/out" 2>"$TMP/err" ||
		{ cat "$TMP/out" "$TMP/err" >&2; fail "$pol: tree_prog server exited $?"; }
	expect_eq "$pol: workers killed" 3 "$(field "$TMP/out" server killed)"
	expect_eq "$pol: killed workers seen dying by SIGKILL" 3 "$(field "$TMP/out" server signalled)"
	expect_eq "$pol: workers that ended by exit(), _exit() or exit_group" 9 "$(field "$TMP/out" server exited)"
	before=$(field "$TMP/out" server before)
	during=$(field "$TMP/out" server during)
	# The 9 workers that end hold their 16 MiB each until the server has
	# counted them (the 3 killed ones are 3 blocks in at least).
	[ $((during - before)) -ge $((9 * 16 * MiB)) ] ||
		fail "$pol: while the workers allocated the tree grew by only $((during - before)) bytes"
	expect_eq "$pol: the tree with the killed workers zombies" "$before" "$(field "$TMP/out" server zombies)"
	expect_eq "$pol: the tree once every worker is reaped" "$before" "$(field "$TMP/out" server after)"
	note "$pol: parent $before, with the workers $during, after $(field "$TMP/out" server after)"
done
