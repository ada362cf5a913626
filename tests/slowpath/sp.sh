# tests/slowpath/sp.sh - sourced after lib.sh by the slow-path shell tests.
SP_CASE=$BUILD/tests/slowpath/sp_case
[ -x "$SP_CASE" ] || fail "not built: $SP_CASE"
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY

# sp_run TAG POLICY ARGS...: runs sp_case with the shim, GFP_POLICY=POLICY
# and GFP_LOG=$TMP/TAG.log, bounded (120 s: 124). Leaves $TMP/TAG.out,
# $TMP/TAG.err, SP_RC (the status as a shell reports it: 128+N for signal
# N) and SP_PID.
sp_run() {
	local tag=$1 policy=$2
	shift 2
	rm -f "$TMP/$tag.log" "$TMP/$tag.pid"
	SP_RC=0
	GFP_POLICY=$policy GFP_LOG=$TMP/$tag.log bounded 120 \
		bash -c 'echo $$ >"$1" && shift && LD_PRELOAD=$SHIM exec "$@"' _ "$TMP/$tag.pid" \
		"$SP_CASE" "$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err" || SP_RC=$?
	SP_PID=$(cat "$TMP/$tag.pid" 2>/dev/null)
	touch "$TMP/$tag.log"
}

# sp_field TAG NAME [ITER]: a field of sp_case's result line of iteration ITER (0).
sp_field() {
	sed -n "s/^iter=${3:-0} .*\\b$2=\\([^ ]*\\).*/\\1/p" "$TMP/$1.out"
}

# sp_show TAG: everything about a run, for a failure message.
sp_show() {
	{
		echo "--- $1: status $SP_RC, stdout:"
		cat "$TMP/$1.out"
		echo "--- stderr:"
		head -c 1000 "$TMP/$1.err"
		echo "--- log:"
		head -c 3000 "$TMP/$1.log"
	} >&2
}

# sp_expect_result TAG ITER RESULT FREED: the request returned RESULT (ok/null)
# and the freer had (1) or had not (0) freed by then.
sp_expect_result() {
	local r f
	r=$(sp_field "$1" result "$2")
	f=$(sp_field "$1" freed "$2")
	[ "$r" = "$3" ] && [ "$f" = "$4" ] || {
		sp_show "$1"
		fail "$1: expected result=$3 freed=$4, got result=${r:-none} freed=${f:-none} (status $SP_RC)"
	}
}

# sp_no_match WHAT FILE PATTERN
sp_no_match() {
	! grep -Eq -- "$3" "$2" || { echo "--- $2:" >&2; head -c 2000 "$2" >&2; fail "$1: unexpected /$3/"; }
}

# A frame line of a report: "  #N FUNC+0xOFF (MODULE+0xOFF)", possibly after
# the "gfpshim: " prefix.
FRAME='^(gfpshim: )? *#[0-9]+ '

# run_adj ADJ TAG POLICY ARGS...: sp_run with /proc/self/oom_score_adj ADJ.
run_adj() {
	local adj=$1
	shift
	(echo "$adj" >/proc/self/oom_score_adj && sp_run "$@" && echo "$SP_PID $SP_RC" >"$TMP/$2.st") ||
		fail "cannot set oom_score_adj $adj"
	read -r SP_PID SP_RC <"$TMP/$2.st"
}
