#!/bin/bash
# Only the process's uid may control it. The socket's directory is 0700 and
# the socket 0600, both the process's; gfp-ctl run as another uid (nobody)
# finds no socket it may use and exits 2, changing nothing. Behind the
# directory the listener checks the peer's uid itself: with the directory
# and socket opened to everyone (as root, by hand), a set sent from nobody
# is not applied, and a connection from nobody reads "error: refused".
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

[ "$(id -u)" = 0 ] || skip "needs root to run gfp-ctl as a second uid"
if command -v setpriv >/dev/null 2>&1; then
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
elif command -v runuser >/dev/null 2>&1; then
	as_nobody() { runuser -u nobody -- "$@"; }
else
	skip "neither setpriv nor runuser is installed"
fi
as_nobody true || skip "cannot run a command as uid 65534"
[ "$(as_nobody id -u)" = 65534 ] || fail "as_nobody runs as uid $(as_nobody id -u)"

ctl_start uid 'ctl=1' server -w 1
ctl_read ready
dir=$XDG_RUNTIME_DIR/gfpshim
sock=$dir/$CTL_PID.sock
[ -S "$sock" ] || fail "no socket at $sock"
expect_eq "the directory's owner and mode" "0 700" "$(stat -c '%u %a' "$dir")"
expect_eq "the socket's owner and mode" "0 600" "$(stat -c '%u %a' "$sock")"

# gfp-ctl as nobody, with the process's XDG_RUNTIME_DIR and without.
for xdg in "$XDG_RUNTIME_DIR" ""; do
	rc=0
	as_nobody env XDG_RUNTIME_DIR="$xdg" "$GFP_CTL" "$CTL_PID" set fail.probability=1 \
		>"$TMP/nobody.out" 2>"$TMP/nobody.err" || rc=$?
	[ "$rc" != 0 ] || fail "gfp-ctl as nobody (XDG_RUNTIME_DIR='$xdg'): exit 0: $(cat "$TMP/nobody.out")"
	expect_eq "gfp-ctl as nobody (XDG_RUNTIME_DIR='$xdg'): exit status" 2 "$rc"
	expect_contains "gfp-ctl as nobody" "$TMP/nobody.err" "no control socket for process $CTL_PID"
done
expect_get fail.probability 0

# The peer's uid: open the way to the socket, then talk to it as nobody.
chmod 0711 "$TMP" "$XDG_RUNTIME_DIR" "$dir" || fail "chmod"
chmod 0666 "$sock" || fail "chmod $sock"
# peer MODE: as nobody, connects to the socket; "send": sends a set first
# (the listener may close before reading it: a reset is no error here),
# "listen": sends nothing. Prints what came back.
peer() {
	as_nobody /usr/bin/python3 - "$sock" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
reply = b""
try:
    if sys.argv[2] == "send":
        s.sendall(b"set fail.probability=1\n")
        s.shutdown(socket.SHUT_WR)
    while True:
        b = s.recv(4096)
        if not b:
            break
        reply += b
except OSError as e:
    reply += ("(%s)" % e.strerror).encode()
sys.stdout.write(reply.decode())
PY
}
peer send >"$TMP/peer.out" 2>"$TMP/peer.err" ||
	fail "the client as nobody could not connect through the opened directory: $(cat "$TMP/peer.err")"
note "uid 65534 sending a set through an opened directory got: $(cat "$TMP/peer.out")"
peer listen >"$TMP/peer.out" 2>"$TMP/peer.err" ||
	fail "the client as nobody could not connect through the opened directory: $(cat "$TMP/peer.err")"
expect_contains "a connection from uid 65534" "$TMP/peer.out" "^error: refused: only uid 0 may control this process"
# gfp-ctl wants the directory private again.
chmod 0700 "$TMP" "$XDG_RUNTIME_DIR" "$dir"
expect_get fail.probability 0
ctl_cmd 'run 200'
ctl_expect_field "after the refused sets: NULLs of 2x200 calls" nulls 0
ctl_end
