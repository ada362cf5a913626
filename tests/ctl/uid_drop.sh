#!/bin/bash
# A process that changes its uid after start (a server started as root that
# drops to nobody) refuses gfp-ctl from its starting uid, and gfp-ctl says
# so: exit 1 and the listener's "error: refused: only uid 65534 may control
# this process" on stderr; the set is not applied. (gfp-ctl of the same uid
# can reach the listener's refusal only this way: the directory check stops
# any other uid before it connects.)
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

[ "$(id -u)" = 0 ] || skip "needs root to start a process that changes its uid"

ctl_start drop 'ctl=1' server -w 1
ctl_read ready
sock=$XDG_RUNTIME_DIR/gfpshim/$CTL_PID.sock
ctl_cmd 'setuid 65534'
expect_eq "the process's uid now" "setuid 65534" "$CTL_LINE"
bad=
for i in $(seq 10); do
	gctl "$CTL_PID" set fail.probability=1
	echo "try $i: exit $GCTL_RC: $(tr '\n' ' ' <"$TMP/gctl.err")" >>"$TMP/tries"
	[ "$GCTL_RC" = 1 ] && grep -q 'refused: gfpshim: only uid 65534 may control this process' \
		"$TMP/gctl.err" || bad=1
done
ctl_cmd 'run 200'
ctl_expect_field "after refused sets: NULLs of 2x200 calls" nulls 0
ctl_end
[ -e "$sock" ] && note "the socket stays after exit: a process of uid 65534 cannot unlink it in root's directory"
[ -z "$bad" ] || { cat "$TMP/tries" >&2; fail "gfp-ctl to a process that changed its uid: expected exit 1 and the refusal on stderr"; }
note "$(cat "$TMP/tries")"
