# tests/tree/members.sh - members started in the background, each holding
# until its fifo is closed (sourced after tree.sh).
declare -A MEMBER_PID MEMBER_FD

# member_start NAME ARGS...: `tree_prog ARGS` under the shim (GFP_POLICY and
# GFP_TREE from the caller's environment), until its "holding" line.
member_start() {
	local name=$1
	shift
	mkfifo "$TMP/$name.fifo"
	# Without the other members' fifos: each ends when its own is closed.
	(
		for fd in "${MEMBER_FD[@]}"; do exec {fd}>&-; done
		exec env LD_PRELOAD="$SHIM" "$PROG" "$@"
	) <"$TMP/$name.fifo" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	MEMBER_PID[$name]=$!
	local fd
	exec {fd}>"$TMP/$name.fifo"
	MEMBER_FD[$name]=$fd
	wait_line "$TMP/$name.out" holding
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
