#!/bin/bash
# oom.victim_timeout: a victim whose memory does not come back is given up
# on, and the next one is chosen (rather than a deadlock). A (32 MiB) is put
# in a frozen cgroup v1 freezer: SIGKILL cannot end a frozen task, as it
# cannot end one in D state that the kernel's oom_reaper could not reap. C
# needs 12 MiB: A is killed first and, still there 1 s later
# (oom.victim_timeout=1s), skipped; B (20 MiB) is killed next, its memory
# comes back and C gets its 12 MiB. A, thawed, then dies of its SIGKILL.
# "Memory came back" means the victim is gone or a zombie (the kernel has
# its memory): a frozen task is neither. Skipped where no freezer cgroup
# can be made.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"

FRZ=/sys/fs/cgroup/freezer/gfptest-tree-$$
mkdir "$FRZ" 2>/dev/null && [ -w "$FRZ/freezer.state" ] ||
	skip "no cgroup v1 freezer to make $FRZ in (mount -t cgroup -o freezer, as root)"
thaw() {
	[ -d "$FRZ" ] || return 0
	echo THAWED >"$FRZ/freezer.state" 2>/dev/null
	sleep 0.2
	rmdir "$FRZ" 2>/dev/null || true
}
trap 'thaw; rm -rf "$TMP"' EXIT

export GFP_TREE=$TMP/tree GFP_POLICY='limit=64M;limit.scope=tree;retries=4;wait=5ms;oom.victim_timeout=1s'
member_start A hold $((32 * MiB)) 0
member_start B hold $((20 * MiB)) 0
echo "${MEMBER_PID[A]}" >"$FRZ/cgroup.procs" || fail "cannot move A into $FRZ"
echo FROZEN >"$FRZ/freezer.state"
for i in $(seq 600); do
	[ "$(cat "$FRZ/freezer.state")" = FROZEN ] && break
	sleep 0.05
done
expect_eq "the freezer" FROZEN "$(cat "$FRZ/freezer.state")"

t0=$(date +%s%3N)
bounded 60 env LD_PRELOAD=$SHIM "$PROG" need $((12 * MiB)) </dev/null >"$TMP/C.out" 2>"$TMP/C.err" ||
	{ cat "$TMP/C.err" >&2; fail "the member that needs 12 MiB exited $?"; }
took=$(($(date +%s%3N) - t0))
expect_eq "C's 12 MiB" $((12 * MiB)) "$(field "$TMP/C.out" got bytes)"
[ "$took" -ge 1000 ] || fail "C got its memory after $took ms: it did not wait oom.victim_timeout for A"
member_expect_killed B
state=$(awk '{print $3}' "/proc/${MEMBER_PID[A]}/stat" 2>/dev/null)
expect_eq "A, killed but frozen, still there" D "$state"
c_pid=$(field "$TMP/C.out" got pid)
/usr/bin/python3 "$TESTS/tree/oom_report.py" "$TMP/C.err" --requester "$c_pid" \
	--victim "${MEMBER_PID[A]}" --victim-live-mib 32 --victim-adj 0 \
	--victim "${MEMBER_PID[B]}" --victim-live-mib 20 --victim-adj 0 \
	--timed-out "${MEMBER_PID[A]}" \
	--members "${MEMBER_PID[A]},${MEMBER_PID[B]},$c_pid" || fail "C's OOM reports"
thaw
member_expect_killed A
note "C waited $took ms: A frozen past oom.victim_timeout=1s, then B"
