# tests/tree/members.sh - members started in the background, each holding
# until its fifo is closed (sourced after tree.sh).
declare -A MEMBER_PID MEMBER_FD
# A command the member is started through (unshare ...): the shim is
# preloaded into tree_prog alone.
MEMBER_WRAP=()

# member_start NAME ARGS...: `tree_prog ARGS` under the shim (GFP_POLICY and
# GFP_TREE from the caller's environment), until its "holding" line.
member_start() {
	member_spawn "$@"
	wait_line "$TMP/$1.out" holding
}

# member_spawn NAME ARGS...: member_start without waiting for a line
# (MEMBER_PROG: another program than tree_prog).
member_spawn() {
	local name=$1
	shift
	mkfifo "$TMP/$name.fifo"
	# Without the other members' fifos: each ends when its own is closed.
	(
		for fd in "${MEMBER_FD[@]}"; do exec {fd}>&-; done
		exec "${MEMBER_WRAP[@]}" env LD_PRELOAD="$SHIM" "${MEMBER_PROG:-$PROG}" "$@"
	) <"$TMP/$name.fifo" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	MEMBER_PID[$name]=$!
	local fd
	exec {fd}>"$TMP/$name.fifo"
	MEMBER_FD[$name]=$fd
}

# member_say NAME LINE: a line on the member's stdin.
member_say() {
	echo "$2" >&"${MEMBER_FD[$1]}"
}

# member_end NAME: lets it free and exit; it must exit 0.
member_end() {
	local rc=0
	exec {MEMBER_FD[$1]}>&-
	wait "${MEMBER_PID[$1]}" || rc=$?
	[ $rc = 0 ] || { cat "$TMP/$1.err" >&2; fail "member $1 exited $rc"; }
}

# member_expect_killed NAME: it must have died by SIGKILL.
member_expect_killed() {
	local rc=0
	exec {MEMBER_FD[$1]}>&-
	wait "${MEMBER_PID[$1]}" || rc=$?
	[ $rc = 137 ] || { cat "$TMP/$1.err" >&2; fail "member $1 exited $rc, expected SIGKILL (137)"; }
}

# need_pidns: skip unless unshare can make PID namespaces here (root).
need_pidns() {
	need_prog unshare
	unshare --pid --fork --kill-child --mount-proc true 2>/dev/null ||
		skip "unshare --pid --fork --mount-proc fails here (no privilege for a PID namespace)"
}

# A PID namespace of its own, with its own /proc (killing unshare kills
# it): the member is its pid 1. With NS_INIT, bash is the namespace's init
# and the member its pid 2: bash passes the member's status on (unshare
# of util-linux 2.38 exits 1 when its child is killed) and keeps the
# namespace, and any child the member leaves, until the member's stdin
# ends.
NS=(unshare --pid --fork --kill-child --mount-proc)
NS_INIT=("${NS[@]}" bash -c '"$@" <&0 & wait $!; s=$?; cat >/dev/null; exit $s' init)

# member_start_ns NAME ARGS...: member_start in a namespace of its own (NS).
member_start_ns() {
	MEMBER_WRAP=("${NS[@]}")
	member_start "$@"
	MEMBER_WRAP=()
}

# member_host_pid NAME: the pid here of a member started in a namespace.
member_host_pid() {
	local p=${MEMBER_PID[$1]} kids i
	for i in 1 2 3; do
		kids=$(cat "/proc/$p/task/$p/children" 2>/dev/null)
		p=${kids%% *}
		[ -n "$p" ] || break
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = tree_prog ] && { echo "$p"; return 0; }
	done
	echo "member $1: no tree_prog under ${MEMBER_PID[$1]}" >&2
	return 1
}

# members_kill: every member still there, with SIGKILL (a failed test
# leaves none behind).
members_kill() {
	local p
	for p in "${MEMBER_PID[@]}"; do kill -KILL "$p" 2>/dev/null; done
	return 0
}
