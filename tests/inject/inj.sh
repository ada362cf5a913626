# tests/inject/inj.sh - sourced after lib.sh by the fault-injection tests.
INJ=$BUILD/tests/inject
for p in inj_seq inj_stack inj_ctor inj_site inj_crash inj_cxx; do
	[ -x "$INJ/$p" ] || fail "not built: $INJ/$p"
done
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY GFP_STRICT LD_PRELOAD
REC="/usr/bin/python3 $TESTS/inject/rec.py"

# inj_run TAG POLICY CMD...: runs CMD with the shim, GFP_POLICY=POLICY,
# GFP_LOG=$TMP/TAG.log and GFP_RECORD=$TMP/TAG.rec. Leaves $TMP/TAG.out,
# $TMP/TAG.err, INJ_RC (128+N for signal N) and INJ_PID.
inj_run() {
	local tag=$1 policy=$2
	shift 2
	rm -f "$TMP/$tag.log" "$TMP/$tag.rec"
	GFP_POLICY=$policy GFP_LOG=$TMP/$tag.log GFP_RECORD=$TMP/$tag.rec LD_PRELOAD=$SHIM \
		"$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err" </dev/null &
	INJ_PID=$!
	INJ_RC=0
	wait "$INJ_PID" 2>/dev/null || INJ_RC=$?
	touch "$TMP/$tag.log" "$TMP/$tag.rec"
}

# inj_show TAG: everything about a run, for a failure message.
inj_show() {
	{
		echo "--- $1: status $INJ_RC, stdout:"
		head -c 2000 "$TMP/$1.out"
		echo "--- stderr:"
		head -c 1000 "$TMP/$1.err"
		echo "--- log:"
		head -c 3000 "$TMP/$1.log"
		echo "--- records:"
		head -c 3000 "$TMP/$1.rec"
	} >&2
}

# inj_ok TAG: the run exited 0 and its records are well-formed.
inj_ok() {
	[ "$INJ_RC" = 0 ] || { inj_show "$1"; fail "$1: exit status $INJ_RC"; }
	$REC check "$TMP/$1.rec" >"$TMP/$1.check" 2>&1 || { cat "$TMP/$1.check" >&2; fail "$1: bad records"; }
}

# seq_expect TAG POLICY EXPECTED OPS...: inj_seq OPS under POLICY prints
# "main EXPECTED" (one character per request: '.' served, 'X' failed).
seq_expect() {
	local tag=$1 policy=$2 want=$3
	shift 3
	inj_run "$tag" "$policy" "$INJ/inj_seq" "$@"
	inj_ok "$tag"
	local got
	got=$(sed -n 's/^main //p' "$TMP/$tag.out")
	[ "$got" = "$want" ] || {
		inj_show "$tag"
		fail "$tag: policy '$policy', requests '$*': expected $want, got ${got:-nothing}"
	}
}

# injections TAG: the number of injection records of the run.
injections() { $REC count "$TMP/$1.rec" injection; }

# expect_records TAG EVENT N
expect_records() {
	local n
	n=$($REC count "$TMP/$1.rec" "$2")
	[ "$n" = "$3" ] || { inj_show "$1"; fail "$1: expected $3 '$2' records, got $n"; }
}

# dots N [CHAR]: N times '.' (or CHAR).
dots() { local s; s=$(printf "%${1}s" ''); echo "${s// /${2:-.}}"; }

# nth_sweep TAG "N..." CMD...: runs CMD under fail.nth=N for each N of the
# list, two at a time, each with a 60 s timeout, stdin from $STDIN
# (default /dev/null). Leaves $TMP/TAG.N.{out,err,log,rec,rc}.
nth_sweep() {
	local tag=$1 list=$2 n running=0
	shift 2
	for n in $list; do
		(
			rc=0
			GFP_POLICY="fail.nth=$n" GFP_LOG=$TMP/$tag.$n.log GFP_RECORD=$TMP/$tag.$n.rec \
				bounded 60 env LD_PRELOAD="$SHIM" "$@" <"${STDIN:-/dev/null}" \
				>"$TMP/$tag.$n.out" 2>"$TMP/$tag.$n.err" || rc=$?
			echo "$rc" >"$TMP/$tag.$n.rc"
			touch "$TMP/$tag.$n.rec" "$TMP/$tag.$n.log"
		) &
		running=$((running + 1))
		if [ "$running" -ge 2 ]; then
			wait -n
			running=$((running - 1))
		fi
	done
	wait
}

# sweep_show TAG N: one run of a sweep, for a failure message.
sweep_show() {
	{
		echo "--- $1 fail.nth=$2: status $(cat "$TMP/$1.$2.rc"), stdout:"
		head -c 1000 "$TMP/$1.$2.out"
		echo "--- stderr:"
		head -c 1000 "$TMP/$1.$2.err"
		echo "--- log:"
		head -c 2000 "$TMP/$1.$2.log"
		echo "--- records:"
		head -c 3000 "$TMP/$1.$2.rec"
	} >&2
}

# check_later WHAT: records a failed expectation and goes on, so that one
# run shows every disagreement; check_done fails with all of them.
LATER=
check_later() { LATER="$LATER
  $*"; }
check_done() { [ -z "$LATER" ] || fail "$LATER"; }
