#!/bin/bash
# limit=cgroup;limit.scope=tree: the tree's members are the memcg OOM's
# candidates, and memory.oom.group=1 takes them all along
# (mem_cgroup_get_oom_group). A cgroup v2 of memory.max 32 MiB (a directory
# of v2-format files: see v2.sh) and three members: A holds 16 MiB, B 6 MiB,
# C takes 14 MiB in 16 KiB blocks and meets memory.max at about 9 MiB.
#  * memory.oom.group=0: the victim is A (the most live bytes); C gets its
#    14 MiB, B lives on, and the tree's memory_events count the OOM and the
#    kill.
#  * memory.oom.group=1: A, B and C are all killed, C (the requester)
#    last, and C's log says why.
# (The old code refused limit=cgroup with limit.scope=tree: exit 125.)
source "$TESTS/lib.sh"
source "$TESTS/cgroup/v2.sh"

PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# member TAG BYTES: a member holding BYTES in the background, its stdin
# the fifo $TMP/TAG.in (held open here as fd IN_TAG); PID_TAG its pid.
member() {
	mkfifo "$TMP/$1.in"
	(exec env LD_PRELOAD="$SHIM" GFP_TEST_CGROUP="$CG" GFP_POLICY="$POL" GFP_LOG="$TMP/$1.log" \
		GFP_REPORT="$TMP/$1.json" "$MEMCG_PROG" hold "$2") <"$TMP/$1.in" >"$TMP/$1.out" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	eval "PID_$1=$pid"
	exec {fd}>"$TMP/$1.in"
	eval "IN_$1=$fd"
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -q ready "$TMP/$1.out" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || { show "$1"; fail "$1 ended before it held $2 bytes"; }
		sleep 0.05
	done
	fail "$1 never held its $2 bytes"
}

# status_of PID: its exit status in ST once it ended, "alive" if it has
# not within 60 s (not in a subshell: only this shell may wait for it).
status_of() {
	local i line
	for ((i = 0; i < 1200; i++)); do
		read -r line 2>/dev/null <"/proc/$1/stat" || break
		line=${line##*) }
		[ "${line%% *}" = Z ] && break
		sleep 0.05
	done
	ST=alive
	[ "$i" = 1200 ] && return
	ST=0
	wait "$1" 2>/dev/null || ST=$?
}

POL='limit=cgroup;limit.scope=tree;oom.victim_timeout=60s'
for group in 0 1; do
	v2_dir g$group $((32 * MiB)) max 0 $group
	export GFP_TREE=$TMP/tree$group
	member A$group $((16 * MiB))
	member B$group $((6 * MiB))
	v2_run C$group "$POL" "$MEMCG_PROG" fill KERNEL 16384 $((14 * MiB))
	a=PID_A$group b=PID_B$group
	if [ $group = 0 ]; then
		[ "$STATUS" = 0 ] || { show C0; fail "oom.group=0: C's status $STATUS"; }
		check C0 "o['nulls'] == 0 and o['total'] == $((14 * MiB))" "C gets its memory once A is killed"
		check C0 "'Memory cgroup out of memory: Killed process %d' % ${!a} in log" "A is the victim"
		check C0 "'memory.oom.group' not in log" "no group kill"
		status_of "${!a}"
		expect_eq "oom.group=0: A's status" 137 "$ST"
		kill -0 "${!b}" 2>/dev/null || fail "oom.group=0: B was killed"
		exec {IN_B0}>&-
		status_of "${!b}"
		expect_eq "oom.group=0: B's status" 0 "$ST"
		check B0 "r['tree_memory_events']['oom'] >= 1 and r['tree_memory_events']['oom_kill'] == 1" "the tree's memory.events (B's report)"
		check B0 "r['tree_memory_events']['oom_group_kill'] == 0 and r['memory_events']['oom_kill'] == 0" "no group kill; B killed nobody"
		check C0 "r['memory_events']['oom'] >= 1 and r['memory_events']['oom_kill'] == 1" "C's own memory.events"
	else
		expect_eq "oom.group=1: C's status" 137 "$STATUS"
		check C1 "'Tasks in the tree' in log and 'due to memory.oom.group set' in log" "the group kill is said"
		check C1 "log.count('Memory cgroup out of memory: Killed process') == 2" "A in the report, B in the group's line"
		status_of "${!a}"
		expect_eq "oom.group=1: A's status" 137 "$ST"
		status_of "${!b}"
		expect_eq "oom.group=1: B's status" 137 "$ST"
	fi
done
