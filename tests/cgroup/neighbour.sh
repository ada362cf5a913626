#!/bin/bash
# limit=cgroup counts what the rest of the cgroup uses: in a 64 MiB cgroup
# where another process (without the shim) holds 32 MiB, a program under
# limit=cgroup;oom=fail gets about 32 MiB less before NULL than alone, and
# the kernel kills nothing. And a neighbour that grows while the program is
# far from its watermark is seen before the program gets there: the
# program holds 8 MiB, the neighbour then takes 40 MiB, the program fills
# with small blocks (allowances, no exact decision until the end) and gets
# NULL, not the kernel's OOM kill.
source "$TESTS/lib.sh"
source "$TESTS/cgroup/cg.sh"
POLICY='limit=cgroup;oom=fail;warn.burst=0'

cg_make neighbour $((64 * MiB))
kills=$(cg_kills)

fill() { # TAG CHUNK: the program alone in the cgroup, or beside the holder
	local status=0
	cg_run env LD_PRELOAD="$SHIM" GFP_POLICY="$POLICY" GFP_LOG="$TMP/$1.log" \
		"$CG_ALLOC" fill "$2" >"$TMP/$1.out" 2>&1 || status=$?
	cg_survived "$1" "$status" "$kills"
	json_get "$TMP/$1.out" 'd["total"]'
}

# hold BYTES: a neighbour without the shim, in the cgroup, holding BYTES
# (written) until unhold ends it.
hold() {
	rm -f "$TMP/hold"
	mkfifo "$TMP/hold" || fail "mkfifo $TMP/hold"
	# (sh itself, not a subshell running cg_run: $! is then the holder)
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$CG_ALLOC" hold "$1" >"$TMP/hold" &
	HOLD_PID=$!
	local line=
	IFS= read -r -t 10 line <"$TMP/hold" || true
	expect_eq "the neighbour holds $(($1 / MiB)) MiB" ready "$line"
}
unhold() {
	kill "$HOLD_PID"
	wait "$HOLD_PID" 2>/dev/null || true
}

alone=$(fill alone 65536)
hold $((32 * MiB))
beside=$(fill beside 65536)
unhold
note "alone $((alone / MiB)) MiB, beside a neighbour holding 32 MiB $((beside / MiB)) MiB"
mib_between "what a neighbour holding 32 MiB took from the program" $((alone - beside)) 28 36

# The neighbour grows while the program waits far from its watermark.
coproc PROG { exec sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" env LD_PRELOAD="$SHIM" GFP_POLICY="$POLICY" GFP_LOG="$TMP/staged.log" \
	"$CG_ALLOC" staged $((8 * MiB)) 4096 2>&1; }
prog_pid=$PROG_PID
exec {PROG_OUT}<&"${PROG[0]}" {PROG_IN}>&"${PROG[1]}"
IFS= read -r -t 10 line <&"$PROG_OUT" || true
expect_eq "the program holds 8 MiB" ready "$line"
hold $((40 * MiB))
echo go >&"$PROG_IN"
IFS= read -r -t 60 line <&"$PROG_OUT" || true
status=0
wait "$prog_pid" || status=$?
unhold
echo "$line" >"$TMP/staged.out"
cg_survived staged "$status" "$kills"
total=$(json_get "$TMP/staged.out" 'd["total"]')
note "staged: 8 MiB, the neighbour takes 40 MiB, then $((total / MiB)) MiB in all before NULL"
mib_between "staged: before NULL (what 64 - 40 MiB leaves)" "$total" 12 24
