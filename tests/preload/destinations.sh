#!/bin/bash
# GFP_LOG, GFP_RECORD and GFP_REPORT as an attacker would try them: a
# symlink planted at the path (its target must stay as it was), a file
# swapped for a symlink while the program runs, a program that closes and
# reuses descriptors, a pipe whose reader goes away, /dev/full, fd:N and
# stderr; the files the shim creates are 0600.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/dest_prog
HELLO=$BUILD/tests/preload/hello
INJECT='fail.probability=1;fail.min=1M;fail.verbose=1'
umask 022

# run STATUS NAME VAR=VALUE... -- CMD...: runs CMD under the shim with a time
# bound, stdout and stderr in $TMP/NAME.out and .err.
run() {
	local want=$1 name=$2
	shift 2
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	bounded 60 env "${vars[@]}" LD_PRELOAD="$SHIM" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	local st=$?
	[ "$st" = "$want" ] || { cat "$TMP/$name.err" >&2; fail "$name: status $st, expected $want"; }
}
victim() { printf 'precious\n' >"$TMP/victim"; }
victim_intact() { expect_eq "$1: the symlink's target" precious "$(cat "$TMP/victim")"; }
mode_of() { stat -c %a "$1"; }

# A symlink planted at the report's path: the report replaces the link (a
# new file, renamed into place), its target is not written.
victim
ln -s "$TMP/victim" "$TMP/report.json"
run 0 report_link GFP_REPORT="$TMP/report.json" -- "$HELLO"
victim_intact "GFP_REPORT"
[ -f "$TMP/report.json" ] && [ ! -L "$TMP/report.json" ] || fail "GFP_REPORT: the link is still there"
expect_contains "GFP_REPORT written" "$TMP/report.json" '^\{"gfpshim":'
expect_eq "GFP_REPORT mode" 600 "$(mode_of "$TMP/report.json")"
expect_eq "no temporary file left" "report.json victim" "$(cd "$TMP" && echo report.json* victim)"

# A symlink at a log or record path is refused before main.
for var in GFP_LOG GFP_RECORD; do
	victim
	ln -sf "$TMP/victim" "$TMP/$var.lnk"
	run 125 "${var}_link" "$var=$TMP/$var.lnk" GFP_POLICY="$INJECT" -- "$PROG" mp
	expect_contains "$var=symlink" "$TMP/${var}_link.err" \
		"^gfpshim: error: $var: '$TMP/$var.lnk' is a symbolic link, not followed"
	expect_eq "$var=symlink: one line" 1 "$(wc -l <"$TMP/${var}_link.err")"
	victim_intact "$var"
done

# A hard link at a log or record path (O_NOFOLLOW does not see one) is
# refused too, and so is, for root, a file another user planted there.
for var in GFP_LOG GFP_RECORD; do
	victim
	ln -f "$TMP/victim" "$TMP/$var.hard"
	run 125 "${var}_hard" "$var=$TMP/$var.hard" GFP_POLICY="$INJECT" -- "$PROG" mp
	expect_contains "$var=hard link" "$TMP/${var}_hard.err" \
		"^gfpshim: error: $var: '$TMP/$var.hard' has 2 hard links"
	victim_intact "$var"
	rm -f "$TMP/$var.hard"
	if [ "$(id -u)" = 0 ]; then
		: >"$TMP/$var.planted"
		chown 65534 "$TMP/$var.planted"
		run 125 "${var}_planted" "$var=$TMP/$var.planted" GFP_POLICY="$INJECT" -- "$PROG" mp
		expect_contains "$var=planted" "$TMP/${var}_planted.err" \
			"^gfpshim: error: $var: '$TMP/$var.planted' belongs to uid 65534"
		[ ! -s "$TMP/$var.planted" ] || fail "$var: wrote to a file uid 65534 planted"
	fi
done

# Files the shim creates are 0600 (umask 022 would give 0644).
run 0 modes GFP_LOG="$TMP/new.log" GFP_RECORD="$TMP/new.rec" GFP_REPORT="$TMP/new.json" \
	GFP_POLICY="$INJECT" -- "$PROG" mp
for f in new.log new.rec new.json; do
	[ -s "$TMP/$f" ] || fail "$f not written"
	expect_eq "mode of $f" 600 "$(mode_of "$TMP/$f")"
done

# Swapped while the program runs: after the first injection the log and the
# record file are renamed and symlinks to the victim put in their place. The
# second injection goes to the files opened at start, never to the victim.
victim
mkfifo "$TMP/ctl"
bounded 60 env GFP_LOG="$TMP/swap.log" GFP_RECORD="$TMP/swap.rec" GFP_POLICY="$INJECT" \
	LD_PRELOAD="$SHIM" "$PROG" mwm <"$TMP/ctl" >"$TMP/swap.out" 2>"$TMP/swap.err" &
pid=$!
exec 5>"$TMP/ctl"
for _ in $(seq 200); do
	[ -s "$TMP/swap.rec" ] && grep -q FAULT_INJECTION "$TMP/swap.log" 2>/dev/null && break
	sleep 0.05
done
mv "$TMP/swap.log" "$TMP/swap.log.old"
mv "$TMP/swap.rec" "$TMP/swap.rec.old"
ln -s "$TMP/victim" "$TMP/swap.log"
ln -s "$TMP/victim" "$TMP/swap.rec"
echo >&5
exec 5>&-
wait $pid
expect_eq "swapped: status" 0 "$?"
victim_intact "swapped log and record"
expect_eq "swapped: log lines in the file opened at start" 2 "$(grep -c FAULT_INJECTION "$TMP/swap.log.old")"
expect_eq "swapped: records in the file opened at start" 2 "$(grep -c '"event":"injection"' "$TMP/swap.rec.old")"

# A daemon closes every descriptor and opens its own file, which gets the
# number the shim's log had: the shim must not write into it, and goes on
# writing to its own file (the same file, opened again).
run 0 daemon GFP_LOG="$TMP/d.log" GFP_RECORD="$TMP/d.rec" GFP_POLICY="$INJECT" -- "$PROG" mcm "$TMP/own"
[ ! -s "$TMP/own" ] || fail "the shim wrote into the program's own file: $(head -c 300 "$TMP/own")"
expect_eq "daemon: log lines" 2 "$(grep -c FAULT_INJECTION "$TMP/d.log")"
expect_eq "daemon: records" 2 "$(grep -c '"event":"injection"' "$TMP/d.rec")"

# Started with stdout closed: the log's descriptor must not take its number,
# or the program's output would land in the log.
bounded 60 env GFP_LOG="$TMP/c.log" GFP_POLICY="$INJECT" LD_PRELOAD="$SHIM" "$HELLO" >&- 2>"$TMP/c.err"
! grep -q '^main$' "$TMP/c.log" || fail "the program's stdout went into the log"
# The names of the standard descriptors are symlinks, yet name them.
run 0 dev_stderr GFP_LOG=/dev/stderr GFP_POLICY=confirm=1 -- "$HELLO"
expect_contains "GFP_LOG=/dev/stderr" "$TMP/dev_stderr.err" '^gfpshim: info: gfpshim .* policy:'

# A reader that goes away: the writes fail with EPIPE, the program is not
# killed by SIGPIPE and ends with its own status; one line says so.
for var in GFP_LOG GFP_RECORD; do
	bounded 60 env $var=fd:3 GFP_POLICY="$INJECT" LD_PRELOAD="$SHIM" "$PROG" lp \
		3>&1 >"$TMP/pipe.out" 2>"$TMP/pipe.err" | head -c1 >/dev/null
	expect_eq "$var=fd:3, reader gone: status" 0 "${PIPESTATUS[0]}"
	expect_eq "$var=fd:3, reader gone: the program ran to its end" ok "$(cat "$TMP/pipe.out")"
	expect_contains "$var: broken pipe reported" "$TMP/pipe.err" \
		"^gfpshim: warning: $var: cannot write to fd:3: Broken pipe"
	expect_eq "$var: reported once" 1 "$(grep -c "$var: cannot write" "$TMP/pipe.err")"
done
# The same with messages on stderr (the default), the program's stdout a file.
bounded 60 env GFP_POLICY="$INJECT" LD_PRELOAD="$SHIM" "$PROG" lp 2>&1 >"$TMP/pipe.out" |
	head -c1 >/dev/null
expect_eq "stderr, reader gone: status" 0 "${PIPESTATUS[0]}"
expect_eq "stderr, reader gone: the program ran to its end" ok "$(cat "$TMP/pipe.out")"

# A write that fails (/dev/full) is reported, once.
run 0 full_report GFP_REPORT=/dev/full -- "$HELLO"
expect_contains "GFP_REPORT=/dev/full" "$TMP/full_report.err" \
	"^gfpshim: warning: GFP_REPORT: cannot write to '/dev/full': No space left on device"
run 0 full_record GFP_RECORD=/dev/full GFP_POLICY="fail.probability=1;fail.min=1M" -- "$PROG" mmp
expect_contains "GFP_RECORD=/dev/full" "$TMP/full_record.err" \
	"^gfpshim: warning: GFP_RECORD: cannot write to '/dev/full': No space left on device"
expect_eq "GFP_RECORD=/dev/full: one line" 1 "$(wc -l <"$TMP/full_record.err")"
run 0 full_log GFP_LOG=/dev/full GFP_POLICY="$INJECT" -- "$PROG" mmp
expect_contains "GFP_LOG=/dev/full" "$TMP/full_log.err" \
	"^gfpshim: warning: GFP_LOG: cannot write to '/dev/full': No space left on device"
expect_eq "GFP_LOG=/dev/full: one line" 1 "$(wc -l <"$TMP/full_log.err")"

# fd:N and stderr mean a descriptor in GFP_REPORT as in GFP_LOG and
# GFP_RECORD, never a file of that name.
(cd "$TMP" && run 0 report_fd1 GFP_REPORT=fd:1 -- "$HELLO")
[ ! -e "$TMP/fd:1" ] || fail "GFP_REPORT=fd:1 created a file named fd:1"
# (the report leaves from a destructor, before stdio flushes main's line)
expect_contains "GFP_REPORT=fd:1: the program's output" "$TMP/report_fd1.out" '^main$'
expect_contains "GFP_REPORT=fd:1: the report on stdout" "$TMP/report_fd1.out" '^\{"gfpshim":'
(cd "$TMP" && run 0 report_stderr GFP_REPORT=stderr -- "$HELLO")
[ ! -e "$TMP/stderr" ] || fail "GFP_REPORT=stderr created a file named stderr"
expect_contains "GFP_REPORT=stderr" "$TMP/report_stderr.err" '^\{"gfpshim":'
(cd "$TMP" && run 0 record_stderr GFP_RECORD=stderr GFP_POLICY="fail.probability=1;fail.min=1M" -- "$PROG" mp)
[ ! -e "$TMP/stderr" ] || fail "GFP_RECORD=stderr created a file named stderr"
expect_contains "GFP_RECORD=stderr" "$TMP/record_stderr.err" '^\{"event":"injection"'
note "destinations: symlinks, swaps, reused descriptors, pipes, /dev/full, fd:N"
