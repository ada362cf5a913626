#!/bin/bash
# A program that trusts malloc dereferences the NULL of an injected failure:
# it dies by SIGSEGV, and GFP_RECORD holds the injection record and then the
# crash record (signal 11, same pid, the next seq), whose backtrace starts at
# the faulting function (crash_use) and goes up to main - never inside the
# shim. The same for abort() (signal 6, from libc's abort). A program that
# installs its own SIGSEGV handler in main keeps it: that handler runs,
# after the shim's "caught" record of the fault.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

inj_run none 'fail.nth=2' "$INJ/inj_crash" segv
expect_eq "no injection: status" 0 "$INJ_RC"
expect_contains "no injection" "$TMP/none.out" '^survived$'
expect_records none crash 0

inj_run segv 'fail.nth=1' "$INJ/inj_crash" segv
expect_eq "status after the injected NULL" 139 "$INJ_RC"
$REC check "$TMP/segv.rec" || fail "segv: bad records"
expect_eq "segv: events in order" 'injection crash' "$($REC events "$TMP/segv.rec" | paste -sd ' ')"
expect_eq "segv: crash signal" 11 "$($REC get "$TMP/segv.rec" crash signal)"
expect_eq "segv: crash pid" "$INJ_PID" "$($REC get "$TMP/segv.rec" crash pid)"
expect_eq "segv: crash seq" 2 "$($REC get "$TMP/segv.rec" crash seq)"
expect_eq "segv: injection frame" 'inj_crash crash_alloc' \
	"$($REC get "$TMP/segv.rec" injection frames | cut -d';' -f1 | sed 's/+0x.*//')"
frames=$($REC get "$TMP/segv.rec" crash frames)
note "crash frames: $frames"
[[ $frames != *libgfpshim* ]] || fail "segv: the crash backtrace has the shim's frames: $frames"
segv_frames=$frames

inj_run abort 'fail.nth=1' "$INJ/inj_crash" abort
expect_eq "abort: status" 134 "$INJ_RC"
$REC check "$TMP/abort.rec" || fail "abort: bad records"
expect_eq "abort: events in order" 'injection crash' "$($REC events "$TMP/abort.rec" | paste -sd ' ')"
expect_eq "abort: crash signal" 6 "$($REC get "$TMP/abort.rec" crash signal)"
frames=$($REC get "$TMP/abort.rec" crash frames)
note "abort frames: $frames"
[[ $frames =~ ^libc\.so\.6\  ]] || fail "abort: the top frame is not libc's: $frames"
[[ $frames != *libgfpshim* ]] || fail "abort: the crash backtrace has the shim's frames: $frames"
echo "$frames" | tr ';' '\n' | head -4 | grep -q '^libc\.so\.6 abort+0x' || fail "abort: no abort frame near the top: $frames"
echo "$frames" | tr ';' '\n' | grep -Eq '^inj_crash main(\.cold)?\+0x' || fail "abort: main is not in the crash backtrace: $frames"

# The program's own handler, installed in main, is the one that runs.
inj_run handler 'fail.nth=1' "$INJ/inj_crash" handler
expect_eq "handler: status" 139 "$INJ_RC"
expect_contains "handler: the program's handler ran" "$TMP/handler.err" '^program handler ran$'
expect_eq "handler: the injection record" 1 "$(injections handler)"
$REC check "$TMP/handler.rec" >/dev/null || fail "handler: bad records"
expect_eq "handler: the shim saw the fault first, then the handler returned, then the default" \
	'injection caught caught_left crash' "$($REC events "$TMP/handler.rec" | paste -sd ' ')"

# The faulting frame itself comes first.
[[ $segv_frames =~ ^inj_crash\ crash_use\+0x[0-9a-f]+\;inj_crash\ main\+0x ]] ||
	fail "segv: the crash backtrace does not start at the faulting function crash_use, then main: $segv_frames"
