#!/bin/bash
# The OOM step calls the notifiers first under every oom=, as out_of_memory()
# does: a notifier that frees is progress, nobody is killed. A small KERNEL
# request under a full budget (nothing else to reclaim) with a notifier
# that frees 512 KiB succeeds under oom=kill, abort, fail, wait and notify,
# and under a tree's budget (limit.scope=tree) before any victim is chosen.
# Before, only oom=notify called them: the others killed, aborted or failed.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
POL='limit=8M;default=KERNEL;retries=4;wait=5ms'

check_notified() {
	local tag=$1
	[ "$SP_RC" = 0 ] || { sp_show $tag; fail "$tag: status $SP_RC, expected 0"; }
	sp_expect_result $tag 0 ok 0
	local calls
	calls=$(sp_field $tag notifier_calls)
	[ "${calls:-0}" -ge 1 ] || { sp_show $tag; fail "$tag: the notifier was not called"; }
	sp_no_match "$tag: OOM report" "$TMP/$tag.log" 'invoked oom-killer|Killed process|aborting'
	sp_no_match "$tag: failure report" "$TMP/$tag.log" 'allocation failure'
}

for oom in kill abort fail wait notify; do
	sp_run notify-$oom "$POL;oom=$oom" --flags KERNEL --size 4096 --source budget --notifier
	check_notified notify-$oom
done
note "oom=kill|abort|fail|wait|notify: the notifier freed, the request succeeded"

# NOFS: out_of_memory calls them before its !__GFP_FS exit.
sp_run notify-nofs "$POL" --flags NOFS --size 4096 --source budget --notifier
check_notified notify-nofs

# A tree's budget: the notifiers before tree_oom_kill chooses a victim (the
# process is the tree's only member: it would be its own victim).
GFP_TREE=$TMP/tree sp_run notify-tree "$POL;limit.scope=tree;oom=kill" --flags KERNEL \
	--size 4096 --source budget --notifier
check_notified notify-tree
note "limit.scope=tree: the notifier freed before any victim was chosen"
