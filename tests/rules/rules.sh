# tests/rules/rules.sh - sourced after lib.sh by the GFP_RULES tests.
RULES_PROG=$BUILD/tests/rules/rules_prog
RECSUM="/usr/bin/python3 $TESTS/rules/recsum.py"
[ -x "$RULES_PROG" ] || fail "not built: $RULES_PROG"
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY GFP_STRICT

# A budget whose failing requests show their flags in how they fail: small
# KERNEL ones reach the OOM step (oom, in recsum.py's words), NORETRY ones
# fail after their round (noretry).
PRESSURE='limit=4M;oom=fail;retries=2;wait=1ms;warn.burst=0'

# rp_run TAG RULES POLICY ARGS...: rules_prog ARGS with the shim,
# GFP_RULES=RULES, GFP_POLICY=POLICY, records in $TMP/TAG.rec and the log in
# $TMP/TAG.log. Leaves $TMP/TAG.out, $TMP/TAG.err and RP_RC.
rp_run() {
	local tag=$1 rules=$2 policy=$3
	shift 3
	rm -f "$TMP/$tag".*
	RP_RC=0
	GFP_RULES=$rules GFP_POLICY=$policy GFP_RECORD=$TMP/$tag.rec GFP_LOG=$TMP/$tag.log \
		LD_PRELOAD=$SHIM "$RULES_PROG" "$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err" || RP_RC=$?
	touch "$TMP/$tag.rec" "$TMP/$tag.log"
}

# rp_show TAG: everything about a run, for a failure message.
rp_show() {
	{
		echo "--- $1: status $RP_RC, stdout:"
		cat "$TMP/$1.out"
		echo "--- stderr:"
		head -c 1000 "$TMP/$1.err"
		echo "--- log:"
		head -c 2000 "$TMP/$1.log"
		echo "--- records:"
		$RECSUM who "$TMP/$1.rec"
	} >&2
}

# rp_summary TAG [EVENT]: "WHO SIZE FLAGS ROUNDS" of each EVENT record
# (failure) but the filling ones, ';'-joined.
rp_summary() {
	$RECSUM who "$TMP/$1.rec" "${2:-failure}" | grep -v '^fill ' | paste -sd ';'
}

# rp_expect WHAT TAG EXPECTED [EVENT]: the run exited 0 and its records sum
# up to EXPECTED.
rp_expect() {
	local got
	got=$(rp_summary "$2" "${4:-}")
	[ "$RP_RC" = 0 ] && [ "$got" = "$3" ] || {
		rp_show "$2"
		fail "$1: expected records '$3', got '$got' (status $RP_RC)"
	}
	note "$1: $got"
}

# rp_expect_out WHAT TAG EXPECTED: rules_prog's result lines, ' '-joined.
rp_expect_out() {
	local got
	got=$(grep -v '^filled=' "$TMP/$2.out" | paste -sd ' ')
	[ "$got" = "$3" ] || { rp_show "$2"; fail "$1: expected '$3', got '$got'"; }
}
