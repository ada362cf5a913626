# tests/programs/idle.sh - sourced after lib.sh by the `programs` tests.
#
# A real program is run three times: plain (no LD_PRELOAD), under the idle
# shim (LD_PRELOAD, no GFP_* variable at all) and under the shim with
# GFP_REPORT. The first two must agree byte for byte on stdout, stderr and
# exit status; the third proves the shim really was in the process compared.

# The caller's environment must not leak a policy into the "idle" run, nor a
# preload into the plain one.
for v in $(compgen -e); do
	case $v in GFP_*) unset "$v" ;; esac
done
unset LD_PRELOAD
# glibc malloc settings make the shim warn on stderr by design (glibc_warn,
# src/compat.c), which is not what the comparison is about; meson's test
# runner sets MALLOC_PERTURB_ to a random value when it is not set.
unset MALLOC_PERTURB_ MALLOC_CHECK_ MALLOC_TOP_PAD_ MALLOC_TRIM_THRESHOLD_ \
	MALLOC_MMAP_THRESHOLD_ MALLOC_MMAP_MAX_ MALLOC_ARENA_MAX MALLOC_ARENA_TEST GLIBC_TUNABLES
[ -f "$SHIM" ] || fail "the shim is not built: $SHIM"

# Input of the runs; a test may point it at a file.
STDIN=/dev/null

# run_mode TAG MODE CMD...: MODE is plain, idle or report. Leaves
# $TMP/TAG.MODE.{out,err,rc} (and .pid, the pid of the process started);
# the report run writes $TMP/TAG.report.json.
run_mode() {
	local tag=$1 mode=$2 pid rc
	shift 2
	local base="$TMP/$tag.$mode"
	rm -f "$TMP/$tag.report.json"
	case $mode in
	plain) "$@" <"$STDIN" >"$base.out" 2>"$base.err" & ;;
	idle) LD_PRELOAD="$SHIM" "$@" <"$STDIN" >"$base.out" 2>"$base.err" & ;;
	report)
		GFP_REPORT="$TMP/$tag.report.json" LD_PRELOAD="$SHIM" \
			"$@" <"$STDIN" >"$base.out" 2>"$base.err" &
		;;
	*) fail "run_mode: unknown mode $mode" ;;
	esac
	pid=$!
	rc=0
	wait "$pid" || rc=$?
	echo "$pid" >"$base.pid"
	echo "$rc" >"$base.rc"
}

# same_file WHAT A B: fails with a diff unless A and B are byte-identical.
same_file() {
	if ! cmp -s -- "$2" "$3"; then
		echo "--- diff $2 $3 (first 40 lines):" >&2
		diff -a -- "$2" "$3" | head -n 40 >&2
		fail "$1: not byte-identical"
	fi
}

# compare_runs TAG A B: A and B runs of TAG agree on stdout, stderr, status.
compare_runs() {
	local a="$TMP/$1.$2" b="$TMP/$1.$3"
	expect_eq "$1: exit status ($2 vs $3)" "$(cat "$a.rc")" "$(cat "$b.rc")"
	same_file "$1: stdout ($2 vs $3)" "$a.out" "$b.out"
	same_file "$1: stderr ($2 vs $3)" "$a.err" "$b.err"
}

# identical_under_idle_shim TAG CMD...: runs CMD plain and under the idle
# shim; the two must be byte-identical. The plain run's results stay in
# $TMP/TAG.plain.* for the caller to check that the run did real work.
identical_under_idle_shim() {
	local tag=$1
	shift
	run_mode "$tag" plain "$@"
	run_mode "$tag" idle "$@"
	compare_runs "$tag" plain idle
}

# expect_status TAG MODE N: the MODE run of TAG exited with N.
expect_status() {
	local rc
	rc=$(cat "$TMP/$1.$2.rc")
	if [ "$rc" != "$3" ]; then
		echo "--- stderr of the $2 run:" >&2
		head -c 2000 "$TMP/$1.$2.err" >&2
		fail "$1: $2 run exited with $rc, expected $3"
	fi
}

# expect_failure TAG MODE: the MODE run of TAG exited with a status other
# than 0 (the exact value is whatever the program's version uses; the
# comparison between runs is what pins it down).
expect_failure() {
	[ "$(cat "$TMP/$1.$2.rc")" != 0 ] || fail "$1: $2 run succeeded, expected a failure"
}

# report_get FILE FIELD: prints one number of a GFP_REPORT file. FIELD is
# "pid", "totals.calls" (or .bytes, .failures) or "ENTRY.calls" with an
# entry name of src/entries.def; an entry absent from the report is 0.
# Fails on a missing or malformed report.
report_get() {
	[ -s "$1" ] || fail "no GFP_REPORT written at $1: was the shim loaded?"
	/usr/bin/python3 - "$1" "$2" <<'EOF' || fail "cannot read '$2' from report $1"
import json, sys
r = json.load(open(sys.argv[1]))
field = sys.argv[2]
if field == "pid":
    print(r["pid"])
elif field.startswith("totals."):
    print(r["totals"][field[len("totals."):]])
else:
    entry, _, key = field.rpartition(".")
    print(r["entries"].get(entry, {}).get(key, 0))
EOF
}

# expect_at_least WHAT MIN ACTUAL
expect_at_least() {
	case $3 in
	'' | *[!0-9]*) fail "$1: not a number: '$3'" ;;
	esac
	[ "$3" -ge "$2" ] || fail "$1: expected at least $2, got $3"
}

# served_by_shim TAG ENTRY MIN CMD...: runs CMD under the shim with
# GFP_REPORT and checks that the report was written by that very process
# (its pid) and counts at least MIN calls of ENTRY ("totals" for all).
# The run's stdout and status must also match the plain run.
served_by_shim() {
	local tag=$1 entry=$2 min=$3 report field
	shift 3
	run_mode "$tag" report "$@"
	report="$TMP/$tag.report.json"
	expect_eq "$tag: exit status with GFP_REPORT" "$(cat "$TMP/$tag.plain.rc")" \
		"$(cat "$TMP/$tag.report.rc")"
	same_file "$tag: stdout with GFP_REPORT" "$TMP/$tag.plain.out" "$TMP/$tag.report.out"
	expect_eq "$tag: pid of the report's writer" "$(cat "$TMP/$tag.report.pid")" \
		"$(report_get "$report" pid)"
	if [ "$entry" = totals ]; then
		field=totals.calls
	else
		field="$entry.calls"
	fi
	expect_at_least "$tag: '$field' in $report" "$min" "$(report_get "$report" "$field")"
	note "$tag: $field = $(report_get "$report" "$field") (all entries: $(report_get "$report" totals.calls) calls)"
}
