#!/bin/bash
# A request is applied whole or not at all. "set limit=512M\0;limit=1M"
# (a NUL byte inside) is refused, not cut at the NUL; so is a second
# request after the first line, and a request longer than the listener
# takes (64 KiB), or one that ends before its newline. Each gets an error
# line and changes nothing.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"
need_prog python3

ctl_start framing 'ctl=1;limit=64M' server -w 1
ctl_read ready
sock=$XDG_RUNTIME_DIR/gfpshim/$CTL_PID.sock

# raw TAG PYTHON-BYTES-EXPR: sends those bytes, half-closes, prints the reply.
raw() {
	bounded 60 python3 - "$sock" "$2" >"$TMP/$1.out" 2>&1 <<'PY' || fail "$1: the client failed: $(cat "$TMP/$1.out")"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(eval(sys.argv[2]))
s.shutdown(socket.SHUT_WR)
reply = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    reply += b
sys.stdout.write(reply.decode(errors="replace"))
PY
}

raw nul 'b"set limit=512M\0;limit=1M\n"'
expect_contains "a NUL inside a set" "$TMP/nul.out" "^error: .*NUL"
expect_get limit 67108864
raw nul_get 'b"get\0limit\n"'
expect_contains "a NUL inside a get" "$TMP/nul_get.out" "^error: .*NUL"
raw two 'b"set wait=5ms\nset limit=1M\n"'
expect_contains "two requests" "$TMP/two.out" "^error: .*one request"
expect_get wait 20ms
expect_get limit 67108864
raw long 'b"set wait=5ms;" + b"fail.probability=0;" * 4000 + b"limit=1M\n"'
expect_contains "a request of 76 KB" "$TMP/long.out" "^error: .*longer than"
expect_get wait 20ms
expect_get limit 67108864
# A request cut short (its client killed, say) is no request.
raw cut 'b"set wait=7ms"'
expect_contains "a set without its newline" "$TMP/cut.out" "^error: .*before its newline"
expect_get wait 20ms
raw whole 'b"set wait=7ms\n"'
expect_eq "the same set with its newline" ok "$(cat "$TMP/whole.out")"
expect_get wait 7ms
ctl_cmd 'run 100'
ctl_expect_field "NULLs after the refused requests" nulls 0
ctl_end
