#!/bin/bash
# A process stopped while it holds the tree's lock (SIGSTOP, ^Z, a frozen
# cgroup in the middle of a decision) does not stop the tree: a member's
# decision near the watermark waits 2 s for the lock, says so once, and
# decides without it. Once the holder is killed, the robust lock passes on
# (EOWNERDEAD): a new member C, the first to ask for it then, takes it
# without waiting (a wait would end in C's own warning).
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
export GFP_TREE=$TMP/tree GFP_POLICY='limit=64M;limit.scope=tree'

mkfifo "$TMP/B.fifo"
(exec env LD_PRELOAD="$SHIM" "$PROG" tries) <"$TMP/B.fifo" >"$TMP/B.out" 2>"$TMP/B.err" &
b_pid=$!
exec {b_in}>"$TMP/B.fifo"
echo 4096 >&$b_in # B has made the tree
wait_line "$TMP/B.out" try

"$PROG" lockstop >"$TMP/L.out" 2>"$TMP/L.err" &
l_pid=$!
wait_line "$TMP/L.out" locked
for i in $(seq 600); do
	[ "$(awk '{print $3}' /proc/$l_pid/stat)" = T ] && break
	sleep 0.05
done
expect_eq "the lock holder" T "$(awk '{print $3}' /proc/$l_pid/stat)"

# try N: B's malloc(N) (more than a batch: decided under the lock); the ms it took.
try() {
	local n t0
	n=$(($(grep -c '"event":"try"' "$TMP/B.out") + 1))
	t0=$(date +%s%3N)
	echo "$1" >&$b_in
	for ((i = 0; i < 3000; i++)); do
		[ "$(grep -c '"event":"try"' "$TMP/B.out")" -ge $n ] && break
		sleep 0.02
	done
	[ "$(field "$TMP/B.out" try ok $n)" = true ] || fail "B's $1 bytes were refused"
	echo $(($(date +%s%3N) - t0))
}
took=$(try $((8 * MiB)))
[ "$took" -ge 1900 ] ||
	fail "B's decision with the lock held by a stopped process took $took ms, expected about 2 s"
expect_eq "B's warning" \
	"gfpshim: warning: limit.scope=tree: the tree's lock was held for more than 2 s (a member stopped?): deciding without it" \
	"$(grep -v '^  #' "$TMP/B.err")"
kill -KILL $l_pid
wait $l_pid 2>/dev/null
rc=0
echo $((8 * MiB)) | LD_PRELOAD="$SHIM" bounded 60 "$PROG" tries >"$TMP/C.out" 2>"$TMP/C.err" || rc=$?
[ "$rc" = 0 ] || { cat "$TMP/C.err" >&2; fail "C exited $rc"; }
[ "$(field "$TMP/C.out" try ok 1)" = true ] || fail "C's 8 MiB were refused"
[ ! -s "$TMP/C.err" ] || fail "C, after the holder was killed: $(cat "$TMP/C.err")"
took2=$(try $((8 * MiB)))
note "with the holder stopped: $took ms; killed: C decided under the lock, then B in $took2 ms"
exec {b_in}>&-
wait $b_pid || fail "B exited $?"
