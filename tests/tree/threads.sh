#!/bin/bash
# A member with threads (tree_prog threads, started by posix_spawn and by
# fork+exec): 4 MiB from its main thread, half of them freed by a detached
# thread that only frees, 2 MiB from a thread that exits. What it charges
# the tree is what jemalloc says it holds (stats.allocated less internal
# bytes, every cache flushed), its parent sees the same tree it sees, and
# after it has ended the tree is the parent's own again. Under the budget
# routes (limit= alone) and the shim's (stats=sites).
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"

for extra in "" ";stats=sites"; do
	for how in posix_spawn fork-exec; do
		pol="limit=256M;limit.scope=tree$extra"
		out=$TMP/out
		GFP_POLICY=$pol LD_PRELOAD=$SHIM bounded 60 "$PROG" spawn $how threads >"$out" 2>"$TMP/err" ||
			{ cat "$out" "$TMP/err" >&2; fail "$pol $how: tree_prog exited $?"; }
		before=$(field "$out" spawn before)
		during=$(field "$out" spawn during)
		own=$(field "$out" threads own)
		[ "$own" -ge $((4 * MiB)) ] || fail "$pol $how: the member holds only $own bytes by jemalloc's count"
		expect_eq "$pol $how: what the member charges against what jemalloc says it holds" \
			"$own" $((during - before))
		expect_eq "$pol $how: the member's view of the tree against its parent's" \
			"$during" "$(field "$out" threads tree_live)"
		expect_eq "$pol $how: the tree after the member ended" "$before" "$(field "$out" spawn after)"
		note "$pol $how: member $own bytes (jemalloc), tree $before -> $during -> $(field "$out" spawn after)"
	done
done
