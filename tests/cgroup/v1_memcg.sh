#!/bin/bash
# The memcg rules of limit=cgroup on the real cgroup hierarchy this host
# has (the v1 memory hierarchy here; a cgroup v2 with the memory controller
# elsewhere), in a 64 MiB cgroup the test makes (skipped, saying why, where
# it cannot). The kernel kills nothing in any case: the shim acts first.
#  * NOFS meets the memcg OOM kill (the process is its only candidate):
#    the old code's NOFS looped for ever (killed here after 30 s).
#  * RETRY_MAYFAIL from 4 threads gets NULL; memory_events counts max and
#    no OOM (the old code had no memory_events).
#  * limit=cgroup;limit.scope=tree: the memcg OOM chooses its victim among
#    the tree's members, the one holding the most (A, 40 MiB), and the
#    requester gets its memory (the old code refused the policy: exit 125).
source "$TESTS/lib.sh"
source "$TESTS/cgroup/cg.sh"
MEMCG_PROG=$BUILD/tests/cgroup/memcg_prog
[ -x "$MEMCG_PROG" ] || fail "not built: $MEMCG_PROG"

# line_get FILE EXPR: EXPR of d, the last JSON line of FILE (bash may have
# written a job's end before it).
line_get() {
	python3 -c 'import json, sys; d = json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1]); print(eval(sys.argv[2]))' "$1" "$2" ||
		{ echo "--- $1:" >&2; head -c 2000 "$1" >&2; fail "cannot read $2 from $1"; }
}

cg_make memcg $((64 * MiB))
note "cgroup v$CG_V $CG, limit 64 MiB"
kills=$(cg_kills)

# run TAG POLICY CMD...: CMD in the cgroup under the shim, killed after 60 s.
run() {
	local tag=$1 pol=$2
	shift 2
	STATUS=0
	cg_bounded 60 env LD_PRELOAD="$SHIM" GFP_POLICY="$pol" GFP_LOG="$TMP/$tag.log" \
		GFP_REPORT="$TMP/$tag.json" "$@" >"$TMP/$tag.out" 2>&1 || STATUS=$?
}

run nofs 'limit=cgroup' "$MEMCG_PROG" fill NOFS 4096 $((128 * MiB))
expect_eq "NOFS: killed" 137 "$STATUS"
expect_contains "NOFS: the shim's memcg OOM kill" "$TMP/nofs.log" \
	'^gfpshim: error: Memory cgroup out of memory: Killed process [0-9]+ \(memcg_prog\)'
expect_contains "NOFS: its report" "$TMP/nofs.log" 'invoked oom-killer: size=4096 order=0 mode:NOFS'
expect_eq "NOFS: the kernel's OOM kills in the cgroup" "$kills" "$(cg_kills)"

run mayfail 'limit=cgroup' "$MEMCG_PROG" fill 'KERNEL|RETRY_MAYFAIL' 4096 $((128 * MiB)) 4
cg_survived mayfail "$STATUS" "$kills"
total=$(line_get "$TMP/mayfail.out" 'd["total"]')
note "RETRY_MAYFAIL from 4 threads: $((total / MiB)) MiB before NULL"
mib_between "RETRY_MAYFAIL: before NULL" "$total" 40 63
expect_eq "RETRY_MAYFAIL: every thread got NULL" 4 "$(line_get "$TMP/mayfail.out" 'd["nulls"]')"
expect_eq "RETRY_MAYFAIL: memory_events" True \
	"$(json_get "$TMP/mayfail.json" 'd["memory_events"]["max"] >= 1 and d["memory_events"]["oom"] == 0')"

# The tree: A holds 40 MiB and waits; C takes 30 MiB.
export GFP_TREE=$TMP/tree
POL='limit=cgroup;limit.scope=tree;oom.victim_timeout=60s'
mkfifo "$TMP/A.in"
sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" env LD_PRELOAD="$SHIM" GFP_POLICY="$POL" \
	GFP_LOG="$TMP/A.log" "$MEMCG_PROG" hold $((40 * MiB)) <"$TMP/A.in" >"$TMP/A.out" 2>&1 &
a_pid=$!
exec {a_in}>"$TMP/A.in"
for ((i = 0; i < 1200; i++)); do
	grep -q ready "$TMP/A.out" 2>/dev/null && break
	kill -0 $a_pid 2>/dev/null || { cat "$TMP/A.out" "$TMP/A.log" >&2; fail "A ended"; }
	sleep 0.05
done
grep -q ready "$TMP/A.out" || { kill -KILL $a_pid; fail "A never held its 40 MiB"; }
run C "$POL" "$MEMCG_PROG" fill KERNEL 4096 $((30 * MiB))
a_status=0
for ((i = 0; i < 1200; i++)); do kill -0 $a_pid 2>/dev/null || break; sleep 0.05; done
kill -KILL $a_pid 2>/dev/null && a_status=alive
[ "$a_status" = alive ] || wait $a_pid || a_status=$?
cg_survived C "$STATUS" "$kills"
expect_eq "the tree: C took its 30 MiB" $((30 * MiB)) "$(line_get "$TMP/C.out" 'd["total"]')"
expect_eq "the tree: A, the member holding the most, was the victim" 137 "$a_status"
expect_contains "the tree: C's memcg OOM kill" "$TMP/C.log" \
	"Memory cgroup out of memory: Killed process $a_pid \\(memcg_prog\\)"
expect_eq "the tree: C's memory_events" True \
	"$(json_get "$TMP/C.json" 'd["memory_events"]["oom_kill"] == 1 and d["tree_memory_events"]["oom_kill"] == 1')"
