# tests/reserve/rs.sh - sourced after lib.sh by the reservation tests.
TXN=$BUILD/tests/reserve/txn
UTHREAD=$BUILD/tests/reserve/uthread
[ -x "$TXN" ] && [ -x "$UTHREAD" ] || fail "not built: $TXN, $UTHREAD"
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY GFP_STRICT

# rs_run TAG POLICY [VAR=VALUE...] CMD...: runs CMD under the shim with
# GFP_POLICY=POLICY and the log in $TMP/TAG.log; with RS_REPORT=1 also the
# report in $TMP/TAG.json. The report turns stats=totals on, which takes
# requests off the plain fast path: the runs without it test that path.
# Only CMD is preloaded: a preloaded wrapper would write its own report.
# Leaves $TMP/TAG.out, $TMP/TAG.err and RS_RC (124: timed out after
# RS_TIMEOUT seconds, 60 by default).
rs_run() {
	local tag=$1 policy=$2 report=()
	shift 2
	rm -f "$TMP/$tag.log" "$TMP/$tag.json"
	[ "${RS_REPORT:-0}" = 1 ] && report=(GFP_REPORT="$TMP/$tag.json")
	RS_RC=0
	bounded "${RS_TIMEOUT:-60}" env LD_PRELOAD="$SHIM" GFP_POLICY="$policy" \
		GFP_LOG="$TMP/$tag.log" "${report[@]}" "$@" \
		>"$TMP/$tag.out" 2>"$TMP/$tag.err" || RS_RC=$?
	touch "$TMP/$tag.log"
}

# rs_show TAG: everything about a run, for a failure message.
rs_show() {
	{
		echo "--- $1: status $RS_RC, stdout:"
		tr '\n' ' ' <"$TMP/$1.out"
		echo
		echo "--- stderr:"
		head -c 2000 "$TMP/$1.err"
		echo "--- log:"
		head -c 3000 "$TMP/$1.log"
		echo "--- report:"
		head -c 3000 "$TMP/$1.json" 2>/dev/null
		echo
	} >&2
}

# rs_load TAG: a run that exited 0; its key=value lines become shell
# variables named TAG_key.
rs_load() {
	local k v
	[ "$RS_RC" = 0 ] || { rs_show "$1"; fail "$1: status $RS_RC"; }
	while IFS='=' read -r k v; do
		[[ $k =~ ^[A-Za-z0-9_]+$ ]] && printf -v "${1}_$k" '%s' "$v"
	done <"$TMP/$1.out"
}

# want TAG WHAT EXPR: EXPR, an arithmetic expression of the loaded
# variables, holds; else the run is shown and the test fails with WHAT.
want() {
	(($3)) || { rs_show "$1"; fail "$1: $2 (expected $3)"; }
}

# rs_report TAG KEY: the report's "reserve" field KEY.
rs_report() {
	/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["reserve"][sys.argv[2]])' \
		"$TMP/$1.json" "$2" || { rs_show "$1"; fail "$1: no reserve.$2 in the report"; }
}

# near A B TOL: |A - B| <= TOL, for arithmetic expressions.
near() { local d=$(($1 - $2)); ((d <= $3 && d >= -$3)); }
