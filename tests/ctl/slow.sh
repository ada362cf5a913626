#!/bin/bash
# Slow clients cannot stall the listener. Three clients connect and never
# finish their request: one sends a byte every 0.4 s, one every 3 s, one
# nothing; meanwhile gfp-ctl get and set answer, every time (the old
# listener waited for the slow clients to finish: it would never have
# answered). A request whole while a slow client that connected before it
# is still connected is answered before that client is dropped (a listener
# that reads one connection at a time answers it after); as the machine may
# stall the test past the slow client's deadline, the first attempt where
# the request was sent in time shows it. A client that has not sent its
# whole request 1 s after it connected is dropped, not before, with an
# error line saying why. Afterwards the listener still serves.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"
need_prog python3

ctl_start slow 'ctl=1' server -w 1
ctl_read ready
sock=$XDG_RUNTIME_DIR/gfpshim/$CTL_PID.sock

# slow_client OUT GAP BYTES: connects, sends BYTES one every GAP seconds
# (never a newline), reading meanwhile; writes "closed AFTER SENT REPLY"
# when the listener closes the connection (AFTER: seconds since it began
# to connect, SENT: bytes sent by then), or "open ..." when it was still
# connected after a generous 60 s.
slow_client() {
	bounded 90 python3 - "$sock" "$2" "$3" >"$1" 2>&1 <<'PY' &
import select, socket, sys, time
path, gap, data = sys.argv[1], float(sys.argv[2]), sys.argv[3].encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
t0 = time.monotonic()  # before the listener can have taken it
s.connect(path)
sent, reply = 0, b""
next_send = time.monotonic() + gap
while time.monotonic() - t0 < 60:
    r, _, _ = select.select([s], [], [], max(0.0, min(next_send, t0 + 60) - time.monotonic()))
    if r:
        try:
            b = s.recv(4096)
        except OSError:
            b = b""
        if not b:
            print("closed %.3f %d %s" % (time.monotonic() - t0, sent, reply.decode(errors="replace").strip()))
            sys.exit(0)
        reply += b
        continue
    if sent < len(data):
        try:
            s.send(data[sent:sent + 1])
        except OSError:
            continue
        sent += 1
    next_send = time.monotonic() + gap
print("open %.3f %d %s" % (time.monotonic() - t0, sent, reply.decode(errors="replace").strip()))
PY
}
pids=()
slow_client "$TMP/c1.out" 0.4 "get$(printf '%200s' '')"; pids+=($!)
slow_client "$TMP/c2.out" 3 'get limit'; pids+=($!)
slow_client "$TMP/c3.out" 100 get; pids+=($!)
cleanup() { kill "${pids[@]}" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

# gfp-ctl answers, and right, with the slow clients connected (or already
# dropped: either way it must answer).
ctl_ok() {
	local rc=0
	bounded 60 "$GFP_CTL" "$CTL_PID" "$@" >"$TMP/gctl.out" 2>"$TMP/gctl.err" || rc=$?
	[ "$rc" = 0 ] || fail "gfp-ctl $* with slow clients connected: exit $rc: $(cat "$TMP/gctl.err")"
}
for _ in 1 2 3; do
	ctl_ok get wait
	expect_eq "get wait" "wait=20ms" "$(cat "$TMP/gctl.out")"
done
ctl_ok set wait=5ms
expect_get wait 5ms

# A slow client S connects, then a client F sends "get wait" whole: F's
# answer must come while S is still connected. An attempt where F's request
# went out 0.9 s or more after S began to connect shows nothing (S may have
# been dropped first, rightly), nor one where the listener, stalled past
# S's deadline, found both at once; 20 attempts.
bounded 120 python3 - "$sock" >"$TMP/order.out" 2>&1 <<'PY' || fail "no attempt answered a whole request before an earlier slow client was dropped: $(cat "$TMP/order.out")"
import select, socket, sys, time
path = sys.argv[1]
for attempt in range(1, 21):
    t0 = time.monotonic()
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.connect(path)
    slow.sendall(b"get")
    fast = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    fast.connect(path)
    fast.sendall(b"get wait\n")
    in_time = time.monotonic() - t0 < 0.9
    reply, first = b"", None
    while first is None:
        r, _, _ = select.select([slow, fast], [], [], 30)
        if not r:
            sys.exit("attempt %d: neither an answer nor a drop within 30 s" % attempt)
        if slow in r:
            first = "drop"
        else:
            b = fast.recv(4096)
            reply += b
            if not b or reply.endswith(b"\n"):
                first = "answer"
    slow.close()
    fast.close()
    if reply.strip() and reply.strip() != b"wait=5ms":
        sys.exit("attempt %d: the answer %r" % (attempt, reply))
    print("attempt %d: %s first (request %s)" % (attempt, first, "in time" if in_time else "late"))
    if first == "answer" and in_time:
        sys.exit(0)
sys.exit(1)
PY
note "$(tail -1 "$TMP/order.out")"

# Each slow client was dropped: closed, after its 1 s and not before, told
# why.
for c in c1 c2 c3; do
	wait "${pids[0]}" 2>/dev/null
	pids=("${pids[@]:1}")
	read -r how after sent reply <"$TMP/$c.out" || fail "$c: no result: $(cat "$TMP/$c.out")"
	[ "$how" = closed ] || fail "$c: the listener never dropped it: $(cat "$TMP/$c.out")"
	/usr/bin/python3 -c 'import sys; sys.exit(float(sys.argv[1]) < 0.99)' "$after" ||
		fail "$c: dropped after $after s, before its deadline of 1 s"
	note "$c: dropped after $after s, having sent $sent bytes: $reply"
	[[ $reply == "error: "*"1 s"* ]] || fail "$c: no error line saying why: '$reply'"
done

# The listener still serves, and the program's calls are unaffected.
expect_get wait 5ms
ctl_cmd 'run 100'
ctl_expect_field "NULLs after the slow clients" nulls 0
ctl_end
