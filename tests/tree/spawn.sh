#!/bin/bash
# Every way a process starts another keeps the tree together: tree_prog
# starts `tree_prog hold 8M` by fork (no exec), fork+exec, vfork+exec,
# posix_spawn and system (through sh: two generations). While the child
# holds its 8 MiB the parent's gfp_budget_usage() counts them (its view and
# the child's are the same bytes), and once the child has ended the tree's
# live bytes are the parent's own again, to the byte. A forked child is
# charged for what it allocates after the fork, not for what it inherited.
# A member that execs (reexec: 256 KiB counted, then exec) keeps its slot
# and is counted from zero: its old heap is not counted twice.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"

child=$((8 * MiB))
for how in fork fork-exec vfork-exec posix_spawn system reexec; do
	out=$TMP/$how.out
	args=("$how" hold $child)
	[ $how = reexec ] && args=(posix_spawn reexec hold $child)
	GFP_POLICY='limit=256M;limit.scope=tree' LD_PRELOAD=$SHIM bounded 60 \
		"$PROG" spawn "${args[@]}" >"$out" 2>"$TMP/$how.err" ||
		{ cat "$out" "$TMP/$how.err" >&2; fail "$how: tree_prog exited $?"; }
	expect_eq "$how: the child's status" 0 "$(field "$out" spawn status)"
	before=$(field "$out" spawn before)
	during=$(field "$out" spawn during)
	after=$(field "$out" spawn after)
	held=$(field "$out" holding bytes)
	seen=$(field "$out" holding tree_live)
	expect_eq "$how: bytes the child holds" $child "$held"
	grew=$((during - before))
	# The child's own heap besides its blocks: well under 128 KiB.
	[ $grew -ge $child ] && [ $grew -lt $((child + 128 * 1024)) ] ||
		fail "$how: the tree grew by $grew bytes while the child held $child (before $before, during $during)"
	expect_eq "$how: the child's view of the tree against the parent's" "$during" "$seen"
	expect_eq "$how: the tree once the child has ended (the parent's own)" "$before" "$after"
	note "$how: before $before, during $during (+$grew), after $after"
done
