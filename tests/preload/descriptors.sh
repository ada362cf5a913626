#!/bin/bash
# The shim's descriptors, as a program sees them. Under every policy that
# needs no file (idle, limit=, stats=sites, stats=paths, fail.probability=0)
# a program lists exactly the descriptors it lists without the shim, before
# and after allocations that make the shim unwind, and the files it opens
# get the same numbers. A GFP_LOG or GFP_RECORD path, the control socket
# (ctl=1) and the memory pressure trigger (kswapd.psi=1) are one descriptor
# more each, close-on-exec, at the top of the first 1024 (below
# RLIMIT_NOFILE when that is lower). A program
# that closes every descriptor from 3 up and opens its own files in their
# place (a daemon; CPython's children) never has them read from or written
# to by the shim, even while it logs, records and unwinds from 5 threads;
# the log and the records go on in their files, opened again. fd:N that the
# program closed and reused is not written to either.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/preload/fd_prog
INJECT='fail.probability=1;fail.min=1M;fail.verbose=1'
for v in $(compgen -e); do
	case $v in GFP_*) unset "$v" ;; esac
done

# capture NAME CMD...: CMD with a time bound, stdout and stderr in
# $TMP/NAME.out and .err, its status in $TMP/NAME.rc.
capture() {
	local name=$1
	shift
	local rc=0
	bounded 120 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	echo "$rc" >"$TMP/$name.rc"
}

# compare NAME EXTRA FILE WHAT: the listings and the numbers of NAME.out
# against plain.out; EXTRA descriptors of the shim's (0 or 1, FILE's).
compare() {
	/usr/bin/python3 - "$TMP/plain.out" "$TMP/$1.out" "$2" "$3" "$(ulimit -n)" "$4" <<'PY' || fail "$4 (above)"
import os, sys
plain_out, shim_out, extra, path, nofile, name = sys.argv[1:7]
extra, nofile = int(extra), int(nofile)
top = min(nofile, 1024)
def parse(f):
    lists, cur, opened = [], None, None
    for line in open(f).read().splitlines():
        w = line.split()
        if w[0] == "fd":
            cur = {} if cur is None else cur
            cur[int(w[1])] = (int(w[2]), int(w[3]), int(w[4]))
        elif w[0] == "end":
            lists.append(cur or {})
            cur = None
        elif w[0] == "opened":
            opened = w[1:]
    return lists, opened
pl, po = parse(plain_out)
sl, so = parse(shim_out)
name += f" (RLIMIT_NOFILE {nofile})"
assert len(pl) == len(sl) == 2, f"{name}: {len(sl)} listings, the plain run {len(pl)}"
assert po == so, f"{name}: opened {so}, without the shim {po}"
for i, (p, s) in enumerate(zip(pl, sl)):
    mine = {fd: v for fd, v in s.items() if fd not in p}
    same = {fd for fd in p if s.get(fd, (None,))[0] == p[fd][0]}
    assert same == set(p), f"{name}: listing {i}: the program's own {sorted(p)}, with the shim {sorted(s)}"
    assert len(mine) == extra, f"{name}: listing {i}: the shim holds {sorted(mine)}, expected {extra} (all: {sorted(s)})"
    for fd, (cloexec, dev, ino) in mine.items():
        st = os.stat(path) if path else None
        assert not st or (dev, ino) == (st.st_dev, st.st_ino), f"{name}: fd {fd} is not {path}"
        assert cloexec == 1, f"{name}: fd {fd} is not close-on-exec"
        assert top - 32 <= fd < top, f"{name}: fd {fd} is not in [{top - 32}, {top})"
print(f"# {name}: {len(sl[0])} and {len(sl[1])} descriptors, the shim's {sorted(set(sl[1]) - set(pl[1]))}")
PY
}

listing() {
	capture plain "$PROG" lslo
	expect_eq "plain run" 0 "$(cat "$TMP/plain.rc")"
	local pol i=0
	for pol in '' 'limit=8G' 'stats=sites' 'fail.probability=0' 'stats=paths' \
		'limit=8G;stats=sites;fail.probability=0'; do
		i=$((i + 1))
		capture "pol$i.$1" env GFP_POLICY="$pol" LD_PRELOAD="$SHIM" "$PROG" lslo
		expect_eq "GFP_POLICY='$pol': status" 0 "$(cat "$TMP/pol$i.$1.rc")"
		[ ! -s "$TMP/pol$i.$1.err" ] || fail "GFP_POLICY='$pol': stderr: $(cat "$TMP/pol$i.$1.err")"
		compare "pol$i.$1" 0 "" "GFP_POLICY='$pol'"
	done
	rm -f "$TMP/l.log" "$TMP/l.rec"
	capture "log$1" env GFP_LOG="$TMP/l.log" GFP_POLICY=confirm=1 LD_PRELOAD="$SHIM" "$PROG" lslo
	expect_eq "GFP_LOG=file: status" 0 "$(cat "$TMP/log$1.rc")"
	expect_contains "GFP_LOG=file: the log" "$TMP/l.log" "policy:"
	compare "log$1" 1 "$TMP/l.log" "GFP_LOG=file"
	capture "rec$1" env GFP_RECORD="$TMP/l.rec" LD_PRELOAD="$SHIM" "$PROG" lslo
	expect_eq "GFP_RECORD=file: status" 0 "$(cat "$TMP/rec$1.rc")"
	compare "rec$1" 1 "$TMP/l.rec" "GFP_RECORD=file"
	mkdir -p -m 700 "$TMP/run"
	capture "ctl$1" env XDG_RUNTIME_DIR="$TMP/run" GFP_POLICY=ctl=1 LD_PRELOAD="$SHIM" "$PROG" lslo
	expect_eq "ctl=1: status ($(cat "$TMP/ctl$1.err"))" 0 "$(cat "$TMP/ctl$1.rc")"
	compare "ctl$1" 1 "" "ctl=1"
	# (the trigger is armed by the shim's thread: the program waits for
	# the line that says so, and closes what it read it with)
	rm -f "$TMP/psi.log"
	capture "psi$1" env GFP_LOG="$TMP/psi.log" GFP_POLICY='limit=1G;kswapd=1;kswapd.psi=1;confirm=1' \
		LD_PRELOAD="$SHIM" "$PROG" wlslo "$TMP/psi.log" "kswapd.psi: "
	expect_eq "kswapd.psi=1: status" 0 "$(cat "$TMP/psi$1.rc")"
	if grep -q "no memory pressure trigger" "$TMP/psi.log"; then
		note "kswapd.psi=1: no pressure trigger here: $(grep kswapd.psi "$TMP/psi.log")"
	else
		compare "psi$1" 2 "" "kswapd.psi=1 and GFP_LOG=file"
	fi
}
listing ''
# A low limit: the shim's descriptor stays below it.
(ulimit -n 64 && listing 64) || exit 1

# The program closes everything and reopens its own files at the numbers
# the shim used; the shim logs, records (and so unwinds) from 5 threads.
# Its files must be untouched: same bytes, every offset still 0.
hostile() {
	local name=$1 ops=$2
	shift 2
	printf 'precious\n' >"$TMP/own"
	rm -f "$TMP/$name.log" "$TMP/$name.rec"
	capture "$name" env GFP_LOG="$TMP/$name.log" GFP_RECORD="$TMP/$name.rec" \
		GFP_POLICY="$INJECT" LD_PRELOAD="$SHIM" "$@" "$PROG" "$ops" "$TMP/own" 40
	expect_eq "$name: status (stdout: $(head -c 300 "$TMP/$name.out"))" 0 "$(cat "$TMP/$name.rc")"
	expect_eq "$name: the program's file" precious "$(cat "$TMP/own")"
	expect_contains "$name: the program ran to its end" "$TMP/$name.out" '^ok$'
}
(ulimit -n 256 && hostile some cFmtmvp) || exit 1
expect_eq "some: log lines (2 + 20 injections)" 22 "$(grep -c FAULT_INJECTION "$TMP/some.log")"
expect_eq "some: records" 22 "$(grep -c '"event":"injection"' "$TMP/some.rec")"
[ ! -s "$TMP/some.err" ] || fail "some: stderr: $(cat "$TMP/some.err")"
# Every number taken: the shim cannot open its files again and says so
# (once, on stderr), but never touches the program's.
(ulimit -n 256 && hostile full cfmtmvp) || exit 1
expect_eq "full: stderr (one line: the log is gone)" 1 "$(wc -l <"$TMP/full.err")"
expect_contains "full: the warning" "$TMP/full.err" \
	"^gfpshim: warning: GFP_LOG: cannot write to '$TMP/full.log': Too many open files; no more messages$"

# fd:N closed by the program and reused for a file of its own: the shim
# does not write into it, and says so once on stderr.
printf 'precious\n' >"$TMP/own"
capture fdn env GFP_LOG=fd:7 GFP_POLICY="$INJECT" LD_PRELOAD="$SHIM" "$PROG" cFmtmvp "$TMP/own" 40 7>"$TMP/fd7"
expect_eq "fd:7 reused: status" 0 "$(cat "$TMP/fdn.rc")"
expect_eq "fd:7 reused: the program's file" precious "$(cat "$TMP/own")"
expect_eq "fd:7 reused: one warning" 1 "$(wc -l <"$TMP/fdn.err")"
expect_contains "fd:7 reused: the warning" "$TMP/fdn.err" \
	"^gfpshim: warning: GFP_LOG: cannot write to fd:7: .*; no more messages$"
