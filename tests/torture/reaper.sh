#!/bin/bash
# The test harness's own guarantee (lib.sh): a bounded command, and a whole
# test, leave no process behind, even one that blocks every signal, left its
# process group and session, and was orphaned. A hung child forked under the
# shim is such a process: libunwind blocks every signal around its locks.
source "$TESTS/lib.sh"
need_prog pgrep setsid python3
marker=gfptest-reaper-$$-$RANDOM

# A process that blocks every signal it can and sleeps, its argv carrying
# the marker and TAG.
BLOCKER="import signal, time; signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals()); time.sleep(3600)"
blocker() { python3 -c "$BLOCKER" "$marker" "$1"; }
export -f blocker
export BLOCKER marker

alive() { pgrep -f -- "$marker${1:+ $1}" || true; }
# none_alive WHAT: no marked process is left.
none_alive() {
	local left
	left=$(alive)
	[ -z "$left" ] || fail "$1: processes outlived it: $(ps -o pid,ppid,pgid,sid,stat,args -p "$(paste -sd, <<<"$left")")"
}
# wait_alive TAG N: waits (generous deadline) until N marked processes of TAG run.
wait_alive() {
	for _ in $(seq 300); do
		[ "$(alive "$2" | wc -l)" -ge "$1" ] && return
		sleep 0.1
	done
	fail "$2: $1 processes did not start"
}
trap 'for p in $(alive); do kill -KILL "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# 1. The deadline passes: a child that forked a grandchild blocking every
#    signal, another in a session of its own, and an orphan (its parent
#    exited), all die with the command, before bounded returns.
rc=0
bounded 3 bash -c '
	blocker grandchild &
	setsid bash -c "blocker session" &
	bash -c "blocker orphan & exit 0"
	sleep 3600' || rc=$?
expect_eq "status after the deadline" 124 "$rc"
none_alive "a command past its deadline"

# 2. The command ends and leaves a daemon behind: bounded returns when the
#    command ends (not at its deadline) and the daemon is gone.
rc=0
bounded 3600 bash -c 'setsid bash -c "blocker daemon &" & wait; exit 7' || rc=$?
expect_eq "status of a command that left a daemon" 7 "$rc"
none_alive "a command that ended"

# 3. Status, stdin and inherited descriptors pass through as with timeout(1).
rc=0
bounded 60 bash -c 'kill -TERM $$' || rc=$?
expect_eq "status of a command killed by SIGTERM" 143 "$rc"
rc=0
bounded 60 bash -c 'exit 77' || rc=$?
expect_eq "status 77 (skip)" 77 "$rc"
expect_eq "stdin" "from stdin" "$(echo "from stdin" | bounded 60 cat)"
expect_eq "descriptor 3" "to fd 3" "$(bounded 60 bash -c 'echo "to fd 3" >&3' 3>&1 >/dev/null)"
expect_eq "SIGPIPE as usual (Python ignores it)" "y" "$(bounded 60 bash -c 'yes | head -n 1')"
expect_eq "LD_PRELOAD reaches the command (not the reaper)" "$SHIM" \
	"$(LD_PRELOAD=$SHIM bounded 60 printenv LD_PRELOAD)"

# 4. A whole test that leaves processes behind (its own process group
#    left, every signal blocked): after it ends they are gone.
cat >"$TMP/leaves.sh" <<'EOF'
source "$TESTS/lib.sh"
blocker left &
setsid bash -c "blocker left-session &"
exit 0
EOF
rc=0
env -u GFPTEST_REAPED bash "$TMP/leaves.sh" 2>"$TMP/leaves.err" || rc=$?
expect_eq "status of a test that left processes" 0 "$rc"
none_alive "a test that ended"
expect_contains "what the test left is said" "$TMP/leaves.err" "left [0-9]+ processes behind: killed"

# 5. A test stopped as meson stops one at its timeout: SIGTERM to the
#    test's process group (and SIGKILL only if the test itself outlives it
#    by half a second). Its processes that block SIGTERM, and the one in
#    another session, die too.
cat >"$TMP/hangs.sh" <<'EOF'
source "$TESTS/lib.sh"
blocker stopped &
setsid bash -c "blocker stopped-session &"
sleep 3600
EOF
setsid env -u GFPTEST_REAPED bash "$TMP/hangs.sh" 2>"$TMP/hangs.err" &
test_pid=$!
wait_alive 2 stopped
kill -TERM -- "-$test_pid"
rc=0
wait "$test_pid" || rc=$?
expect_eq "status of a test stopped by SIGTERM" 143 "$rc"
none_alive "a test stopped by SIGTERM"
note "ok: deadline, daemon, status, whole test ended and stopped"
