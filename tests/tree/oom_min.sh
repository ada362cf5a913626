#!/bin/bash
# A member whose oom_score_adj is -1000 is never the victim, however much it
# holds: A holds 32 MiB at -1000, B 20 MiB at 0; C needs 12 MiB in 4 KiB
# requests. B is killed, not A, and C gets its 12 MiB. Lowering
# oom_score_adj below 0 needs CAP_SYS_RESOURCE: skipped without it
# (tests/unit/tree.c checks the choice itself everywhere).
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"
(echo -1000 >/proc/self/oom_score_adj) 2>/dev/null ||
	skip "cannot write -1000 to /proc/self/oom_score_adj (needs CAP_SYS_RESOURCE)"

export GFP_TREE=$TMP/tree GFP_POLICY='limit=64M;limit.scope=tree;retries=4;wait=5ms;oom.victim_timeout=60s'
member_start A hold $((32 * MiB)) -1000
member_start B hold $((20 * MiB)) 0
bounded 60 env LD_PRELOAD=$SHIM "$PROG" need $((12 * MiB)) </dev/null >"$TMP/C.out" 2>"$TMP/C.err" ||
	{ cat "$TMP/C.err" >&2; fail "the member that needs 12 MiB exited $?"; }
expect_eq "C's 12 MiB" $((12 * MiB)) "$(field "$TMP/C.out" got bytes)"
member_expect_killed B
member_end A
/usr/bin/python3 "$TESTS/tree/oom_report.py" "$TMP/C.err" --requester "$(field "$TMP/C.out" got pid)" \
	--victim "${MEMBER_PID[B]}" --victim-live-mib 20 --victim-adj 0 \
	--members "${MEMBER_PID[A]},${MEMBER_PID[B]},$(field "$TMP/C.out" got pid)" || fail "C's OOM report"
