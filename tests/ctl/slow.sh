#!/bin/bash
# Slow clients cannot stall the listener. Three clients connect: one sends
# a byte of a request every 0.4 s, one every 3 s, one nothing; meanwhile gfp-ctl
# get and set answer at once, every time (within 3 s, where the old
# listener waited for the slow clients to finish). A client that has not
# sent its whole request 1 s after it connected is dropped: its connection
# is closed within a few seconds, before it could finish, with an error
# line saying why. Afterwards the listener still serves.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"
need_prog python3

ctl_start slow 'ctl=1' server -w 1
ctl_read ready
sock=$XDG_RUNTIME_DIR/gfpshim/$CTL_PID.sock

# slow_client OUT GAP BYTES: connects, sends BYTES one every GAP seconds
# (then the newline), reading meanwhile; writes "closed AFTER SENT REPLY"
# when the listener closes the connection (AFTER: seconds since connect,
# SENT: bytes sent by then), or "finished ..." when it sent everything
# without being dropped. Gives up after 15 s.
slow_client() {
	bounded 20 python3 - "$sock" "$2" "$3" >"$1" 2>&1 <<'PY' &
import select, socket, sys, time
path, gap, data = sys.argv[1], float(sys.argv[2]), sys.argv[3].encode() + b"\n"
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
t0 = time.monotonic()
sent, reply = 0, b""
next_send = t0 + gap
while time.monotonic() - t0 < 15:
    r, _, _ = select.select([s], [], [], max(0.0, next_send - time.monotonic()))
    if r:
        try:
            b = s.recv(4096)
        except OSError:
            b = b""
        if not b:
            print("closed %.2f %d %s" % (time.monotonic() - t0, sent, reply.decode(errors="replace").strip()))
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
    else:
        next_send = time.monotonic() + 15
print("finished %.2f %d %s" % (time.monotonic() - t0, sent, reply.decode(errors="replace").strip()))
PY
}
pids=()
slow_client "$TMP/c1.out" 0.4 'get                          limit'; pids+=($!)
slow_client "$TMP/c2.out" 3 'get limit'; pids+=($!)
slow_client "$TMP/c3.out" 100 get; pids+=($!)
cleanup() { kill "${pids[@]}" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
sleep 0.3 # the clients are connected (not a bound: gfp-ctl must answer regardless)

# gfp-ctl, timed: the answer comes within 3 s (the slow clients would hold
# the old listener for 12 s or more).
timed_ctl() {
	local t0 t1 rc=0
	t0=$(date +%s%N)
	bounded 10 "$GFP_CTL" "$CTL_PID" "$@" >"$TMP/gctl.out" 2>"$TMP/gctl.err" || rc=$?
	t1=$(date +%s%N)
	local ms=$(((t1 - t0) / 1000000))
	[ "$rc" = 0 ] || fail "gfp-ctl $* with slow clients connected: exit $rc after $ms ms: $(cat "$TMP/gctl.err")"
	[ "$ms" -le 3000 ] || fail "gfp-ctl $* with slow clients connected took $ms ms"
	note "gfp-ctl $* answered in $ms ms with slow clients connected"
}
for _ in 1 2 3; do
	timed_ctl get wait
	expect_eq "get wait" "wait=20ms" "$(cat "$TMP/gctl.out")"
done
timed_ctl set wait=5ms
expect_get wait 5ms

# Each slow client was dropped: closed before it finished, within 5 s of
# connecting (deadline 1 s), told why.
for c in c1 c2 c3; do
	wait "${pids[0]}" 2>/dev/null
	pids=("${pids[@]:1}")
	read -r how after sent reply <"$TMP/$c.out" || fail "$c: no result: $(cat "$TMP/$c.out")"
	[ "$how" = closed ] || fail "$c: the listener never dropped it: $(cat "$TMP/$c.out")"
	[ "${after%.*}" -lt 5 ] || fail "$c: dropped only after $after s"
	note "$c: dropped after $after s, having sent $sent bytes: $reply"
	[[ $reply == "error: "*"1 s"* ]] || fail "$c: no error line saying why: '$reply'"
done

# The listener still serves, and the program's calls are unaffected.
expect_get wait 5ms
ctl_cmd 'run 100'
ctl_expect_field "NULLs after the slow clients" nulls 0
ctl_end
