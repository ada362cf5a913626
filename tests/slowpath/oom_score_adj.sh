#!/bin/bash
# A process whose oom_score_adj is -1000 is never the OOM victim: a small
# KERNEL request under a full budget with oom=kill (and oom=abort) keeps
# looping and succeeds when another thread frees; the same program without
# -1000 is killed (SIGKILL) with the OOM report naming its oom_score_adj.
# Lowering oom_score_adj needs CAP_SYS_RESOURCE: skipped without it.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"
POL='limit=8M;default=KERNEL;retries=4;wait=5ms'
(echo -1000 >/proc/self/oom_score_adj) 2>/dev/null ||
	skip "cannot write -1000 to /proc/self/oom_score_adj (needs CAP_SYS_RESOURCE)"

for act in kill abort; do
	run_adj -1000 "adj-$act" "$POL;oom=$act" --flags KERNEL --size 4096 --source budget --free-on-canary 1
	[ "$SP_RC" = 0 ] || { sp_show "adj-$act"; fail "oom_score_adj -1000, oom=$act: status $SP_RC"; }
	sp_expect_result "adj-$act" 0 ok 1
	sp_no_match "oom_score_adj -1000, oom=$act: kill line" "$TMP/adj-$act.log" "Killed process"
	note "oom_score_adj -1000, oom=$act: looped $(sp_field "adj-$act" elapsed_ms) ms until the free"
done

run_adj 0 victim "$POL;oom=kill" --flags KERNEL --size 4096 --source budget --free-on-canary 1
[ "$SP_RC" = 137 ] || { sp_show victim; fail "oom_score_adj 0, oom=kill: status $SP_RC, expected 137"; }
expect_contains "oom_score_adj 0: report" "$TMP/victim.log" \
	"^gfpshim: error: sp_case\\($SP_PID\\) invoked oom-killer: size=4096 order=0 mode:KERNEL 0xcc0 oom_score_adj=0\$"
expect_contains "oom_score_adj 0: kill line" "$TMP/victim.log" "Out of memory: Killed process $SP_PID \\(sp_case\\)"
