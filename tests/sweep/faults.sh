#!/bin/bash
# A fault the program's own handler catches (sigaction, signal(), GNU
# libsigsegv) and never leaves before the run ends badly (abort, exit 3,
# a re-raise after SA_RESETHAND) is a crash, not an abort the program
# chose: its finding says the fault's signal and its crash backtrace starts
# at the faulting function, as if no handler were there; a thread that
# faults while three others allocate, the same. A handler that recovers by
# siglongjmp is left: the run is what its exit says (exit 0 with a line
# lost: silent; exit 1: handled), never a crash.
source "$TESTS/lib.sh"
SWEEP=$BUILD/tools/gfp-sweep

sweep() { # TAG PROG ARGS...: gfp-sweep --json TAG.json; console in TAG.out
	local tag=$1
	shift
	bounded 200 "$SWEEP" --timeout 60 -j 2 --json "$TMP/$tag.json" -- "$@" </dev/null >"$TMP/$tag.out" \
		2>"$TMP/$tag.err" || true
	[ -s "$TMP/$tag.json" ] || { cat "$TMP/$tag.err" >&2; fail "$tag: no JSON"; }
}
# TAG: the outcomes, then each finding as "outcome signal fault_signal
# first-crash-function", one per line.
summary() {
	/usr/bin/python3 - "$TMP/$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(f"{k}={v}" for k, v in d["outcomes"].items() if v))
for g in d["findings"]:
    top = g["crash_frames"][0]["function"] if g["crash_frames"] else "-"
    print(g["outcome"], g["signal"], g["fault_signal"], top)
PY
}

PROG=$BUILD/tests/sweep/faultprog
# A checked allocation (handled), then the unchecked one: a crash at it.
for mode in abort:6 signal:6 exit:0 reraise:11 threads:6; do
	m=${mode%:*} sig=${mode#*:}
	sweep "$m" "$PROG" "$m"
	summary "$m" >"$TMP/$m.sum"
	got=$(sed -n 1p "$TMP/$m.sum")
	[[ $got != *abort=* && $got == *crash=1* ]] || fail "$m: outcomes $got (a crash, no abort expected)"
	fault=11
	[ "$m" = reraise ] && fault=0 # the handler returned: the re-raise is the crash
	expect_eq "$m: the crash finding: outcome, end signal, fault, first frame" \
		"crash $sig $fault unchecked" "$(sed -n 2p "$TMP/$m.sum")"
done
expect_contains "console: the fault and how the run ended" "$TMP/abort.out" \
	"^  crash \(signal 11 Segmentation fault, caught by the program's handler, which then ended the run by signal 6 Aborted\) in 1 call path, 1 run"
expect_contains "console: the finding by the fault's signal" "$TMP/abort.out" "^\[1\] crash SIGSEGV in unchecked"
expect_contains "console: exit 3" "$TMP/exit.out" "which then ended the run with status 3\)"
expect_contains "console: the crash is the fault" "$TMP/abort.out" "^  the crash \(the fault the handler caught\):"
note "caught, then abort, signal(), exit 3, SA_RESETHAND re-raise, threads: crash at the fault"

# siglongjmp out of the handler: recovered.
sweep jump0 "$PROG" jump0
summary jump0 >"$TMP/jump0.sum"
got=$(sed -n 1p "$TMP/jump0.sum")
[[ $got != *crash=* && $got == *silent=1* && $got == *handled=1* ]] ||
	fail "jump0: outcomes $got (one silent, one handled, no crash expected)"
expect_eq "jump0: the finding" "silent 0 0 -" "$(sed -n '2,$p' "$TMP/jump0.sum")"
sweep jump1 "$PROG" jump1
summary jump1 >"$TMP/jump1.sum"
got=$(cat "$TMP/jump1.sum")
[[ $got != *crash=* && $got != *silent=* && $got == *handled=2* ]] ||
	fail "jump1: outcomes $got (two handled, no crash, no finding expected)"
note "siglongjmp out of the handler: exit 0 silent, exit 1 handled, no crash"

if [ -x "$BUILD/tests/sweep/sigsegvprog" ]; then
	sweep sigsegv "$BUILD/tests/sweep/sigsegvprog"
	summary sigsegv >"$TMP/sigsegv.sum"
	got=$(sed -n 1p "$TMP/sigsegv.sum")
	[[ $got != *abort=* && $got == *crash=1* ]] || fail "libsigsegv: outcomes $got (a crash, no abort expected)"
	expect_eq "libsigsegv: the finding" "crash 6 11 unchecked" "$(sed -n 2p "$TMP/sigsegv.sum")"
	note "GNU libsigsegv's handler then abort: crash at the fault"
else
	note "libsigsegv not installed (tools/setup --tests): its case not run"
fi
