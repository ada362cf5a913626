#!/bin/bash
# Every process a run starts is gone when the run ends: daemonprog starts a
# daemon (double fork and setsid, out of the run's process group) in every
# run, and in the runs where its second allocation fails another daemon and
# a child in a process group of its own, then hangs. After the sweep no
# process carrying this test's marker is left, the hang was found, and
# so was the handled failure. Then the same with the sweep stopped by
# SIGINT in the middle of a hanging run, and killed by SIGKILL (then the
# runs' keepers end them on their own, within seconds).
source "$TESTS/lib.sh"
need_prog pgrep
SWEEP=$BUILD/tools/gfp-sweep
PROG=$BUILD/tests/sweep/daemonprog
[ -x "$PROG" ] || fail "not built: $PROG"
export TMPDIR=$TMP/tmpdir
mkdir -p "$TMPDIR"
marker=gfpsweep-daemon-$$-$RANDOM
# Whatever this test leaves behind (the failure it looks for) is killed by
# pid: only processes with this test's marker.
leftovers() { pgrep -f -- "--daemon $marker" || true; }
cleanup() {
	local p
	for p in $(leftovers); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
# hanging_sweep TAG: starts a sweep in the background (SWEEP_PID: the
# timeout that runs it) and waits until a run hangs with its daemons.
hanging_sweep() {
	timeout 120 "$SWEEP" --timeout 100 -j 2 -- "$PROG" "$marker" </dev/null \
		>"$TMP/$1.out" 2>"$TMP/$1.err" &
	SWEEP_PID=$!
	for _ in $(seq 600); do
		[ "$(leftovers | wc -l)" -ge 3 ] && return
		sleep 0.1
	done
	fail "$1: no hanging run with its daemons within 60 s"
}
# no_leftovers WHAT [SECONDS]: no process of the runs is left (within SECONDS).
no_leftovers() {
	local left
	for _ in $(seq $((${2:-0} * 10))); do
		[ -z "$(leftovers)" ] && break
		sleep 0.1
	done
	left=$(leftovers)
	[ -z "$left" ] || fail "processes of the runs outlived the $1: $(ps -o pid,ppid,pgid,sid,args -p "$(paste -sd, <<<"$left")")"
}

rc=0
timeout 120 "$SWEEP" --timeout 10 -j 2 --json "$TMP/sweep.json" -- "$PROG" "$marker" \
	</dev/null >"$TMP/sweep.out" 2>"$TMP/sweep.err" || rc=$?
expect_eq "sweep exit status (the hang is a finding)" 1 "$rc"
no_leftovers sweep
outcomes=$(/usr/bin/python3 -c 'import json, sys
print(" ".join(sorted({r["outcome"] for r in json.load(open(sys.argv[1]))["results"]})))' "$TMP/sweep.json")
note "outcomes: $outcomes"
[[ " $outcomes " == *" hang "* ]] || fail "no hang found: $outcomes"
[[ " $outcomes " == *" handled "* ]] || fail "no handled failure found: $outcomes"

# Stopped by SIGINT while a run hangs (the timeout is far away): the runs
# in flight and everything they started are gone when the sweep has exited.
hanging_sweep int
kill -INT "$SWEEP_PID"
rc=0
wait "$SWEEP_PID" || rc=$?
expect_eq "stopped sweep: exit status" 130 "$rc"
no_leftovers "stopped sweep"

# Killed outright: nothing of the sweep runs any more, yet the runs go.
hanging_sweep kill
kill -KILL "$(pgrep -P "$SWEEP_PID" -x gfp-sweep)" || fail "no gfp-sweep under timeout $SWEEP_PID"
wait "$SWEEP_PID" 2>/dev/null
no_leftovers "killed sweep" 30
