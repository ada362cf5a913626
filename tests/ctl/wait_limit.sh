#!/bin/bash
# Raising the limit while a request waits: ctl_prog fills a 4M budget, then
# one small KERNEL malloc loops (oom=wait, wait=10ms, then 600s). It has not
# returned after 300 ms; gfp-ctl get still answers meanwhile; `set
# limit=64M` makes it return a block and the program exits 0. With
# wait=600s the request can only have been woken by the set, not by the end
# of its pause: it returns within a generous 60 s all the same.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

ms() { date +%s%3N; }

for w in 10ms 600s; do
	ctl_start "wait_$w" "ctl=1;limit=4M;oom=wait;wait=$w" waiter 4096
	ctl_read filled
	filled=$(ctl_field bytes)
	[ "$filled" -ge $((3 * 1024 * 1024)) ] || fail "filled only $filled bytes of a 4M budget"
	ctl_read waiting
	t_wait=$(ms)
	# Blocked: no line within 300 ms.
	if IFS= read -r -t 0.3 line <&"$CTL_OUT"; then
		echo "$line" >>"$TMP/wait_$w.out"
		ctl_show
		fail "the request returned under a full budget before the limit was raised: '$line'"
	fi
	expect_get limit 4194304
	expect_get oom wait

	t0=$(ms)
	gctl_expect 0 "$CTL_PID" set limit=64M
	t1=$(ms)
	expect_eq "set's answer" ok "$(cat "$TMP/gctl.out")"
	ctl_read returned 60
	t2=$(ms)
	expect_eq "the waiting request's result" ok "$(sed 's/returned \([a-z]*\).*/\1/' <<<"$CTL_LINE")"
	took=$(ctl_field ms)
	note "wait=$w: filled $filled bytes; the request waited ${took} ms in all; returned $((t2 - t0)) ms after the set began (gfp-ctl took $((t1 - t0)) ms), $((t0 - t_wait)) ms after it began waiting"
	/usr/bin/python3 -c 'import sys; sys.exit(float(sys.argv[1]) < 300)' "$took" ||
		fail "the request says it waited only $took ms, but it was still waiting after 300 ms"
	expect_get limit 67108864
	ctl_end
done
