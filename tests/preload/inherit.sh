#!/bin/bash
# A child inherits GFP_LOG, GFP_RECORD and GFP_REPORT but not their
# descriptors. One that cannot open what its parent opened - it changed its
# uid (a server's worker), CPython's subprocess closed fd:N, the path became
# a symlink or a FIFO - runs as it would without the shim: it says so once,
# on stderr, when it first has something to write (a child with nothing to
# say says nothing), and never exits 125. The first process to read a bad
# value still exits 125 before main, and so does a child that set a value
# of its own. A process that changes its uid without exec keeps the
# descriptor it has. With 5 threads writing, still one line.
source "$TESTS/lib.sh"
need_prog /usr/bin/python3
PROG=$BUILD/tests/preload/fd_prog
INJECT='fail.probability=1;fail.min=1M'
for v in $(compgen -e); do
	case $v in GFP_*) unset "$v" ;; esac
done

# run NAME STATUS VAR=VALUE... -- CMD...: CMD under the shim with a time
# bound; stdout and stderr in $TMP/NAME.out and .err.
run() {
	local name=$1 want=$2
	shift 2
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	local st=0
	bounded 60 env "${vars[@]}" LD_PRELOAD="$SHIM" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || st=$?
	[ "$st" = "$want" ] || { cat "$TMP/$name.err" >&2; fail "$name: status $st, expected $want"; }
}
# one_line NAME REGEX: NAME's stderr is that one line.
one_line() {
	expect_eq "$1: lines on stderr ($(head -c 500 "$TMP/$1.err"))" 1 "$(wc -l <"$TMP/$1.err")"
	expect_contains "$1: the warning" "$TMP/$1.err" "$2"
}

# fd:N: the shell opened it, the child's parent closed it before exec (as
# CPython's subprocess does) or put another file there.
run fd_closed 0 GFP_LOG=fd:7 GFP_POLICY="$INJECT;fail.verbose=1" -- \
	sh -c 'exec 7>&-; exec "$0" mtp' "$PROG" 7>"$TMP/fd7"
expect_eq "fd:7 closed: the child ran" ok "$(cat "$TMP/fd_closed.out")"
one_line fd_closed "^gfpshim: warning: GFP_LOG: cannot write to fd:7: this process did not inherit the descriptor its parent wrote to; no more messages$"
printf 'precious\n' >"$TMP/other"
run fd_other 0 GFP_LOG=fd:7 GFP_POLICY="$INJECT;fail.verbose=1" -- \
	sh -c 'exec 7>>"$1"; exec "$0" mtp' "$PROG" "$TMP/other" 7>"$TMP/fd7"
expect_eq "fd:7 another file: not written to" precious "$(cat "$TMP/other")"
one_line fd_other "^gfpshim: warning: GFP_LOG: cannot write to fd:7: this process did not"
# With nothing to write, nothing is said.
run fd_quiet 0 GFP_LOG=fd:7 GFP_POLICY="$INJECT" -- sh -c 'exec 7>&-; exec "$0" p' "$PROG" 7>"$TMP/fd7"
[ ! -s "$TMP/fd_quiet.err" ] || fail "fd:7 closed, nothing to say: stderr: $(cat "$TMP/fd_quiet.err")"
# A real program: CPython's subprocess closes fd 7 in its child.
run python 0 GFP_LOG=fd:7 GFP_POLICY="$INJECT" -- /usr/bin/python3 -c \
	'import subprocess, sys; r = subprocess.run([sys.argv[1], "p"]); sys.exit(r.returncode)' "$PROG" 7>"$TMP/fd7"
expect_eq "python3's child under GFP_LOG=fd:7" ok "$(cat "$TMP/python.out")"
[ ! -s "$TMP/python.err" ] || fail "python3's child: stderr: $(cat "$TMP/python.err")"

# A child that set a value of its own is checked as strictly as ever.
run own_value 125 GFP_LOG=fd:7 -- sh -c 'exec 7>&-; exec env GFP_LOG=fd:8 "$0" p' "$PROG" 7>"$TMP/fd7"
expect_contains "a child's own fd:8" "$TMP/own_value.err" "^gfpshim: error: GFP_LOG: descriptor 8 is not open"

# The path became a symlink (to a victim) or a FIFO without a reader
# before the child started (python3 changes it, in its own process, after
# it opened it): not followed, not waited for.
mkdir "$TMP/h"
printf 'precious\n' >"$TMP/victim"
CHANGE='import os, subprocess, sys
prog, log, how, victim = sys.argv[1:5]
os.rename(log, log + ".old")
os.symlink(victim, log) if how == "symlink" else os.mkfifo(log)
sys.exit(subprocess.run([prog, "p"]).returncode)'
run symlink 0 GFP_LOG="$TMP/h/log" GFP_POLICY="confirm=1" -- \
	/usr/bin/python3 -c "$CHANGE" "$PROG" "$TMP/h/log" symlink "$TMP/victim"
expect_eq "symlinked log: the victim" precious "$(cat "$TMP/victim")"
one_line symlink "^gfpshim: warning: GFP_LOG: cannot write to '$TMP/h/log': Too many levels of symbolic links in this process \(uid [0-9]+\), though its parent opened it; no more messages$"
expect_contains "symlinked log: the parent's lines" "$TMP/h/log.old" "policy:"
rm -f "$TMP/h/log" "$TMP/h/log.old"
run fifo 0 GFP_LOG="$TMP/h/log" GFP_POLICY="confirm=1" -- \
	/usr/bin/python3 -c "$CHANGE" "$PROG" "$TMP/h/log" fifo ""
one_line fifo "^gfpshim: warning: GFP_LOG: cannot write to '$TMP/h/log': No such device or address in this process"

[ "$(id -u)" = 0 ] || { note "not root: no child that changes its uid"; exit 0; }
command -v setpriv >/dev/null || skip "setpriv is not installed"
# A directory only root may enter: uid 65534 cannot open the files in it.
# (Its name is UTF-8: messages show it as it is.)
ROOT=$TMP/r\303\264ot
ROOT=$(printf "$ROOT")
mkdir -m 700 "$ROOT"
drop=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# The log: the shell (root) opens it and logs; its child, uid 65534, says
# once that it cannot, from 5 threads, and runs to its end.
run log 0 GFP_LOG="$ROOT/log" GFP_POLICY="$INJECT;fail.verbose=1" -- \
	sh -c '"$@"' sh "${drop[@]}" "$PROG" mtp
expect_eq "GFP_LOG: the child ran" ok "$(cat "$TMP/log.out")"
one_line log "^gfpshim: warning: GFP_LOG: cannot write to '$ROOT/log': Permission denied in this process \(uid 65534\), though its parent opened it; no more messages$"
# Nothing to say: nothing said.
run log_quiet 0 GFP_LOG="$ROOT/log" GFP_POLICY="$INJECT" -- sh -c '"$@"' sh "${drop[@]}" "$PROG" p
[ ! -s "$TMP/log_quiet.err" ] || fail "GFP_LOG, nothing to say: stderr: $(cat "$TMP/log_quiet.err")"
# Records and a report: the same.
run rec 0 GFP_RECORD="$ROOT/rec" GFP_POLICY="$INJECT" -- sh -c '"$@"' sh "${drop[@]}" "$PROG" mtp
one_line rec "^gfpshim: warning: GFP_RECORD: cannot write to '$ROOT/rec': Permission denied in this process \(uid 65534\), though its parent opened it; no more records$"
run report 0 GFP_REPORT="$ROOT/r.%p.json" -- sh -c '"$@"' sh "${drop[@]}" "$PROG" p
one_line report "^gfpshim: warning: GFP_REPORT: cannot write to '$ROOT/r\.[0-9]+\.json': Permission denied$"
ls "$ROOT"/r.*.json >/dev/null 2>&1 || fail "GFP_REPORT: the parent's report is missing"

# The first process to read a value it cannot open still exits 125.
st=0
bounded 60 "${drop[@]}" env GFP_LOG="$ROOT/log" LD_PRELOAD="$SHIM" "$PROG" p \
	>"$TMP/first.out" 2>"$TMP/first.err" || st=$?
expect_eq "the first reader: status" 125 "$st"
expect_contains "the first reader" "$TMP/first.err" "^gfpshim: error: GFP_LOG: cannot open '$ROOT/log': Permission denied"
# A process that changes its uid without exec keeps its descriptor.
: >"$ROOT/kept"
run kept 0 GFP_LOG="$ROOT/kept" GFP_POLICY="$INJECT;fail.verbose=1" -- "$PROG" umtp
expect_eq "setuid without exec: log lines (1 + 20)" 21 "$(grep -c FAULT_INJECTION "$ROOT/kept")"
[ ! -s "$TMP/kept.err" ] || fail "setuid without exec: stderr: $(cat "$TMP/kept.err")"
