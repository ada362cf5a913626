# tests/ctl/ctl.sh - sourced after lib.sh by the gfp-ctl tests. ctl_prog runs
# as a coprocess: commands go to its stdin, each answer line is read from
# its stdout with a timeout (no sleeps to wait for it).
CTL_PROG=$BUILD/tests/ctl/ctl_prog
GFP_CTL=$BUILD/tools/gfp-ctl
[ -x "$CTL_PROG" ] || fail "not built: $CTL_PROG"
[ -x "$GFP_CTL" ] || fail "not built: $GFP_CTL"
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY
# The sockets of these tests live in their own directory ($XDG_RUNTIME_DIR/gfpshim).
mkdir -m 0700 "$TMP/xdg" || fail "mkdir $TMP/xdg"
export XDG_RUNTIME_DIR=$TMP/xdg

# ctl_start TAG POLICY ARGS...: starts ctl_prog ARGS with the shim and
# GFP_POLICY=POLICY (only ctl_prog: bounded runs outside the shim). Its
# stderr and log go to $TMP/TAG.err and $TMP/TAG.log, every line read is
# kept in $TMP/TAG.out. Reads the "pid P" line: CTL_PID.
ctl_start() {
	local tag=$1 policy=$2
	shift 2
	CTL_TAG=$tag
	: >"$TMP/$tag.out"
	coproc CTLP { bounded 120 env LD_PRELOAD="$SHIM" GFP_POLICY="$policy" \
		GFP_LOG="$TMP/$tag.log" "$CTL_PROG" "$@" 2>"$TMP/$tag.err"; }
	CTL_COPID=$CTLP_PID
	# Copies: bash drops the coprocess's descriptors when it is reaped.
	exec {CTL_OUT}<&"${CTLP[0]}" {CTL_IN}>&"${CTLP[1]}"
	ctl_read pid
	CTL_PID=${CTL_LINE#pid }
}

# ctl_show: everything about the current program, for a failure message.
ctl_show() {
	{
		echo "--- $CTL_TAG: lines read:"
		cat "$TMP/$CTL_TAG.out"
		echo "--- stderr:"
		head -c 2000 "$TMP/$CTL_TAG.err"
		echo "--- log:"
		head -c 2000 "$TMP/$CTL_TAG.log" 2>/dev/null
	} >&2
}

# ctl_read PREFIX [SECONDS]: reads the program's next line (within SECONDS,
# default 30) into CTL_LINE; it must start with PREFIX.
ctl_read() {
	CTL_LINE=
	if ! IFS= read -r -t "${2:-30}" CTL_LINE <&"$CTL_OUT"; then
		ctl_show
		fail "$CTL_TAG: no line '$1...' within ${2:-30} s"
	fi
	echo "$CTL_LINE" >>"$TMP/$CTL_TAG.out"
	case $CTL_LINE in
	"$1"*) ;;
	*) ctl_show; fail "$CTL_TAG: expected a line '$1...', got '$CTL_LINE'" ;;
	esac
}

# ctl_cmd CMD: sends one command and reads its answer (prefix: CMD's first word).
ctl_cmd() {
	echo "$1" >&"$CTL_IN"
	ctl_read "${1%% *}"
}

# ctl_field NAME: NAME=VALUE of CTL_LINE.
ctl_field() {
	sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$CTL_LINE"
}

# ctl_expect_field WHAT NAME VALUE
ctl_expect_field() {
	local v
	v=$(ctl_field "$2")
	[ "$v" = "$3" ] || { ctl_show; fail "$1: expected $2=$3, got '$CTL_LINE'"; }
}

# ctl_end: "quit", the "bye" line, and exit status 0.
ctl_end() {
	echo quit >&"$CTL_IN"
	ctl_read bye
	ctl_wait 0
}

# ctl_wait STATUS: waits for the program to exit and checks its status.
ctl_wait() {
	local rc=0
	exec {CTL_IN}>&-
	wait "$CTL_COPID" 2>/dev/null || rc=$?
	exec {CTL_OUT}<&-
	[ "$rc" = "$1" ] || { ctl_show; fail "$CTL_TAG: exit status $rc, expected $1"; }
}

# gctl ARGS...: runs gfp-ctl ARGS (not under the shim); GCTL_RC, and its
# output in $TMP/gctl.out and $TMP/gctl.err.
gctl() {
	GCTL_RC=0
	"$GFP_CTL" "$@" >"$TMP/gctl.out" 2>"$TMP/gctl.err" || GCTL_RC=$?
}

# gctl_expect RC ARGS...: gctl, and its exit status must be RC.
gctl_expect() {
	local want=$1
	shift
	gctl "$@"
	[ "$GCTL_RC" = "$want" ] || {
		echo "--- gfp-ctl $*: stdout:" >&2
		head -c 2000 "$TMP/gctl.out" >&2
		echo "--- stderr:" >&2
		head -c 2000 "$TMP/gctl.err" >&2
		fail "gfp-ctl $*: exit status $GCTL_RC, expected $want"
	}
}

# expect_get KEY VALUE: `gfp-ctl CTL_PID get KEY` prints KEY=VALUE.
expect_get() {
	gctl_expect 0 "$CTL_PID" get "$1"
	expect_eq "get $1" "$1=$2" "$(cat "$TMP/gctl.out")"
}
