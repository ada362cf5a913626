#!/bin/bash
# The socket's life: it appears at $XDG_RUNTIME_DIR/gfpshim/PID.sock (else
# /tmp/gfpshim-UID/PID.sock, directory 0700, socket 0600) once main() runs;
# a forked child that ends with exit() (atexit handlers, destructors) or
# _exit() leaves the parent's socket in place and the parent still answers;
# a child (alive) does not listen; the socket is gone once the process has
# exited, and gfp-ctl then exits 2.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

for where in xdg tmp; do
	if [ $where = xdg ]; then
		dir=$XDG_RUNTIME_DIR/gfpshim
	else
		unset XDG_RUNTIME_DIR
		dir=/tmp/gfpshim-$(id -u)
	fi
	ctl_start "life_$where" 'ctl=1' server -w 1
	ctl_read ready
	sock=$dir/$CTL_PID.sock
	[ -S "$sock" ] || fail "$where: no socket at $sock"
	expect_eq "$where: the directory's owner and mode" "$(id -u) 700" "$(stat -c '%u %a' "$dir")"
	expect_eq "$where: the socket's owner and mode" "$(id -u) 600" "$(stat -c '%u %a' "$sock")"
	expect_get ctl 1
	for how in exit _exit; do
		ctl_cmd "fork $how"
		child=$(sed 's/forked \([0-9]*\) .*/\1/' <<<"$CTL_LINE")
		expect_eq "$where: the child ($how) exit status (waitpid)" "forked $child status 0" "$CTL_LINE"
		[ -S "$sock" ] || fail "$where: a child that called $how removed the parent's socket $sock"
		expect_get ctl 1
	done
	# A live child: it does not listen, its parent still does.
	ctl_cmd 'fork hold'
	child=${CTL_LINE#forked }
	[ -d "/proc/$child" ] || fail "$where: the held child $child is not running"
	[ ! -e "$dir/$child.sock" ] || fail "$where: the child $child listens at $dir/$child.sock"
	gctl_expect 2 "$child" get
	expect_get ctl 1
	ctl_cmd reap
	expect_eq "$where: the held child's exit" "reaped $child status 0" "$CTL_LINE"
	[ -S "$sock" ] || fail "$where: the held child's exit removed the parent's socket $sock"
	gctl_expect 0 "$CTL_PID" set fail.probability=0.5
	expect_get fail.probability 0.5
	ctl_end
	[ ! -e "$sock" ] || fail "$where: the socket $sock is still there after the process exited"
	gctl_expect 2 "$CTL_PID" get
	note "$where: $sock: there while running and after three forked children exited, gone after exit"
done
