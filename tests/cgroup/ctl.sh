#!/bin/bash
# limit=cgroup and gfp-ctl: get prints limit=cgroup; a set that would turn a
# process that follows its cgroup into one with a size, or the reverse, is
# not applied (exit 1) and the limit stays; other keys still change. And
# gfp-run, like GFP_POLICY, refuses a near miss of the word (exit 125,
# naming it).
source "$TESTS/lib.sh"
source "$TESTS/cgroup/cg.sh"
GFP_CTL=$BUILD/tools/gfp-ctl
mkdir -m 0700 "$TMP/xdg" || fail "mkdir $TMP/xdg"
export XDG_RUNTIME_DIR=$TMP/xdg

# start TAG POLICY: cg_alloc holding 1 MiB under the shim, in the cgroup.
start() {
	rm -f "$TMP/ready"
	mkfifo "$TMP/ready"
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" env LD_PRELOAD="$SHIM" GFP_POLICY="$2" \
		GFP_LOG="$TMP/$1.log" "$CG_ALLOC" hold $MiB >"$TMP/ready" &
	PID=$!
	local line=
	IFS= read -r -t 10 line <"$TMP/ready" || true
	expect_eq "$1: the program is ready" ready "$line"
}

# ctl WANT_STATUS ARGS...: gfp-ctl PID ARGS; its stdout in $TMP/ctl.out.
ctl() {
	local want=$1 rc=0
	shift
	"$GFP_CTL" "$PID" "$@" >"$TMP/ctl.out" 2>"$TMP/ctl.err" || rc=$?
	[ "$rc" = "$want" ] || { cat "$TMP/ctl.out" "$TMP/ctl.err" >&2; fail "gfp-ctl $*: status $rc, expected $want"; }
}

cg_make ctl $((64 * MiB))
start follows 'limit=cgroup;ctl=1'
ctl 0 get limit
expect_eq "get limit" limit=cgroup "$(cat "$TMP/ctl.out")"
ctl 1 set limit=32M
expect_contains "set limit=32M" "$TMP/ctl.err" "not applied at run time: limit=cgroup is chosen at start-up"
ctl 0 get limit
expect_eq "get limit after the refused set" limit=cgroup "$(cat "$TMP/ctl.out")"
ctl 0 set wait=5ms
ctl 0 get wait
expect_eq "another key changes" wait=5ms "$(cat "$TMP/ctl.out")"
kill "$PID"
wait "$PID" 2>/dev/null || true

start sized 'limit=32M;ctl=1'
ctl 1 set limit=cgroup
expect_contains "set limit=cgroup" "$TMP/ctl.err" "not applied at run time: limit=cgroup is chosen at start-up"
ctl 0 get limit
expect_eq "get limit after the refused set" limit=$((32 * MiB)) "$(cat "$TMP/ctl.out")"
kill "$PID"
wait "$PID" 2>/dev/null || true

status=0
"$GFP_RUN" --policy limit=cgrop -- /bin/true 2>"$TMP/run.err" || status=$?
expect_eq "gfp-run --policy limit=cgrop: status" 125 "$status"
expect_contains "the message names the word" "$TMP/run.err" \
	"bad value 'cgrop' for key 'limit' \(expected a size .*, or cgroup\)"
