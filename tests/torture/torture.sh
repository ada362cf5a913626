#!/bin/bash
# torture.sh CASE: one case of the torture program (torture.c) under every
# mode of the shim. Every mode runs even after one fails; the test fails
# naming each failed mode, its symptom and a command that reproduces it.
#
#   idle   the shim, no policy
#   limit  limit=64M, never reached: the budget is checked at every
#          quiescent point (torture.c, budget_check)
#   tight  limit=3M, oom=fail, short waits: requests wait and fail, the
#          case copes with NULL; the budget is checked too
#   fail   fail.probability=2%: the case copes with NULL
#   filter the same, through a stack filter that names every new call path's
#          frames (the per-address name cache, shared by the threads and
#          emptied by dlclose) and matches globs, under LANG=C.UTF-8
#   sites  stats=sites: at exit the report shows no live bytes at the
#          program's own call sites (it freed every block, whatever thread
#          made or freed it)
#   rules  GFP_RULES under limit=4M, oom=fail, the budget filled to 256K
#          below its watermark first (TORTURE_HEADROOM): rules are looked
#          at only under pressure, so every case runs under it; the budget
#          is checked too
#   unwind every call is a candidate and the stack filter matches none of
#          them: each call's path is unwound (each new one frame by frame)
#          and nothing fails, with stats=sites
#
# Each run is bounded (lib.sh: bounded): past the watchdog it is killed
# with SIGKILL, with every process it started (a hung child of a fork
# blocks every signal, and outlives its parent).
source "$TESTS/lib.sh"
tcase=${1:?usage: torture.sh CASE}
prog=${TORTURE:?TORTURE is the torture program}
secs=${TORTURE_SECONDS:-30}
need_prog python3
[ -x "$prog" ] || fail "$prog is not built"

TIGHT='limit=3M;oom=fail;wait=1ms;retries=2'
RULES='thread:tt-cons* => NOFS; thread:tt-worker* & size>16K => RETRY_MAYFAIL; lib:libtorture_plugin* => NORETRY; size>100K => RETRY_MAYFAIL'

# forkrace is about the unwinder at fork: it runs in the modes that
# unwind, and idle as the control; every other case in every mode.
case $tcase in
forkrace) modes=" idle filter sites unwind " ;;
*) modes="" ;;
esac

failures=()
runs=0
# run MODE VAR=VALUE...: runs the case under the shim with those variables;
# prints one line per mode and records a failure.
run() {
	local mode=$1
	shift
	[ -z "$modes" ] || [[ $modes == *" $mode "* ]] || return 0
	runs=$((runs + 1))
	local out=$TMP/$mode.out err=$TMP/$mode.err rc=0 t0=$SECONDS
	bounded $((secs + 15)) env LD_PRELOAD="$SHIM" TORTURE_SECONDS="$secs" "$@" \
		"$prog" "$tcase" >"$out" 2>"$err" || rc=$?
	local took=$((SECONDS - t0)) why=""
	case $rc in
	0) why=$(check_ok "$mode" "$out") ;;
	1) why="a check failed: $(grep -m1 -o 'FAIL: .*' "$err" || echo '(no message)')" ;;
	124) why="did not end: $(grep -m1 -o 'TIMEOUT: .*' "$err" ||
		echo "hung past the watchdog, killed with what it started after ${took}s")" ;;
	137) why="killed by SIGKILL after ${took}s (the shim's OOM step?): $(grep -m1 -i 'oom\|kill' "$err")" ;;
	*) if [ "$rc" -gt 128 ]; then
		why="crashed: signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
	else
		why="exit status $rc"
	fi ;;
	esac
	if [ -z "$why" ]; then
		note "$tcase $mode: ok in ${took}s: $(sed -n 's/^torture [^:]*: ok //p' "$out")"
		return
	fi
	note "$tcase $mode: FAILED: $why"
	{
		echo "--- $tcase $mode: stderr (last 15 lines):"
		tail -n 15 "$err"
		printf -- '--- reproduce:'
		printf " %q" env LD_PRELOAD="$SHIM" "$@" TORTURE_PLUGIN="${TORTURE_PLUGIN:-}" \
			"$prog" "$tcase"
		echo
	} >&2
	failures+=("$mode ($why)")
}

# check_ok MODE OUT: what an exit status of 0 must come with; prints why not.
check_ok() {
	local mode=$1 out=$2
	grep -q "^torture $tcase: ok " "$out" || { echo "no 'ok' line on stdout"; return; }
	local checks
	checks=$(sed -n 's/.* budget_checks=\([0-9]*\).*/\1/p' "$out")
	case $mode in
	limit | tight | rules)
		[ "${checks:-0}" -gt 0 ] || echo "the budget was never checked (mallctl not found?)"
		;;
	sites)
		check_sites_report "$out"
		;;
	esac
}

# The stats=sites report of the case's own process (children write theirs
# to other files): the program freed every block it made, so each row of
# its own module shows no live bytes.
check_sites_report() {
	local pid
	pid=$(sed -n 's/.* pid=\([0-9]*\).*/\1/p' "$1")
	local rep=$TMP/sites.$pid.json
	[ -s "$rep" ] || { echo "no report $rep at exit"; return; }
	python3 - "$rep" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = r.get("allocinfo")
if not rows:
    print("the report has no allocinfo rows")
    sys.exit()
mine = [x for x in rows if x["module"] in ("torture", "libtorture_plugin.so")]
if not any(x["calls"] for x in mine):
    print("no allocinfo row counts calls of the program's own sites")
live = [x for x in mine if x["live_bytes"] or x["live_calls"]]
if live:
    print("%d of the program's sites show live blocks at exit, all were freed: %s" % (
        len(live), "; ".join("%s+%s %s: %d bytes in %d blocks" % (
            x["module"], x["offset"], x.get("symbol", ""), x["live_bytes"], x["live_calls"])
            for x in live[:4])))
PY
}

run idle
run limit GFP_POLICY='limit=64M' TORTURE_LIMIT=$((64 << 20))
run tight GFP_POLICY="$TIGHT" TORTURE_LIMIT=$((3 << 20)) TORTURE_NULLS=ok
run fail GFP_POLICY='fail.probability=0.02;fail.seed=17' TORTURE_NULLS=ok
run filter GFP_POLICY='fail.probability=0.02;fail.seed=17;fail.reject.sym=nomatch_[[:alpha:]]*' \
	LANG=C.UTF-8 LC_ALL=C.UTF-8 TORTURE_NULLS=ok
run sites GFP_POLICY='stats=sites' GFP_REPORT="$TMP/sites.%p.json"
run rules GFP_POLICY='limit=4M;oom=fail;wait=1ms;retries=2' GFP_RULES="$RULES" \
	TORTURE_LIMIT=$((4 << 20)) TORTURE_HEADROOM=$((256 << 10)) TORTURE_NULLS=ok
run unwind GFP_POLICY='fail.probability=1;fail.sym=nomatch_[[:alpha:]]*;stats=sites' \
	GFP_REPORT="$TMP/unwind.%p.json" LANG=C.UTF-8 LC_ALL=C.UTF-8

[ ${#failures[@]} = 0 ] || fail "$tcase failed in ${#failures[@]} of $runs modes: $(printf '%s; ' "${failures[@]}")"
