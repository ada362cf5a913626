#!/bin/bash
# A request that may not block (NOWAIT, ATOMIC) never waits for the tree's
# lock: while a stopped process holds it, such a member's decision near the
# watermark (here: more than a batch, decided under the lock) fails at
# once instead of waiting 2 s and deciding without it; once the holder is
# gone the same request succeeds. B runs with default=NOWAIT (every request
# of it, stdio's included, may not block); A, a member of default=KERNEL,
# runs threads that keep asking near the lock meanwhile and still gets its
# memory.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
export GFP_TREE=$TMP/tree

mkfifo "$TMP/B.fifo"
(GFP_POLICY='limit=64M;limit.scope=tree;default=NOWAIT' exec env LD_PRELOAD="$SHIM" "$PROG" tries) \
	<"$TMP/B.fifo" >"$TMP/B.out" 2>"$TMP/B.err" &
b_pid=$!
exec {b_in}>"$TMP/B.fifo"
l_pid=
cleanup() {
	[ -z "$l_pid" ] || kill -KILL "$l_pid" 2>/dev/null
	kill -KILL "$b_pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
echo 4096 >&$b_in # B has made the tree
wait_line "$TMP/B.out" try

"$PROG" lockstop >"$TMP/L.out" 2>"$TMP/L.err" &
l_pid=$!
wait_line "$TMP/L.out" locked
for i in $(seq 600); do
	[ "$(python3 -c 'import sys; print(open(sys.argv[1]).read().rsplit(")", 1)[1].split()[0])' /proc/$l_pid/stat)" = T ] && break
	sleep 0.05
done

# try N: B's malloc(N); its answer (true or false).
try() {
	local n
	n=$(($(grep -c '"event":"try"' "$TMP/B.out") + 1))
	echo "$1" >&$b_in
	wait_lines "$TMP/B.out" try $n
	field "$TMP/B.out" try ok $n
}
expect_eq "B's NOWAIT request of 8 MiB while a stopped process holds the tree's lock" \
	false "$(try $((8 << 20)))"
! grep -q "deciding without it" "$TMP/B.err" || fail "B waited for the lock and decided without it"

# A member that may block still decides (without the lock, after its
# wait), from 4 threads at once, each a block above a batch.
GFP_POLICY='limit=64M;limit.scope=tree' LD_PRELOAD="$SHIM" bounded 60 "$PROG" thold 4 $((1 << 20)) \
	</dev/null >"$TMP/A.out" 2>"$TMP/A.err" || true
expect_eq "A's threads, which may block, hold their 1 MiB" $((1 << 20)) "$(field "$TMP/A.out" holding bytes)"

kill -KILL $l_pid
wait $l_pid 2>/dev/null
l_pid=
expect_eq "B's NOWAIT request of 8 MiB once the holder is gone" true "$(try $((8 << 20)))"
exec {b_in}>&-
wait $b_pid || fail "B exited $?"
