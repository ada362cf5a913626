#!/bin/bash
# Under a budget the routes send a request its allowance covers straight to
# jemalloc and look at jemalloc's answer only where it can fail such a
# request (preload/malloc.c): a limit on the address space, set before the
# program starts (routes.sh) or by it later. A program that lowers RLIMIT_AS
# through setrlimit meets the slow path at its first real failure (oom=fail:
# the OOM step fails it, and the record says so). One that uses the raw
# system call is unwatched until jemalloc's first failing mmap; jemalloc
# first tries to map a larger extent than the request needs, and that
# failure comes before the request that fails, so it meets the slow path
# too. ctl=1 keeps the shim's own routes: the control.
source "$TESTS/lib.sh"
PROG=$BUILD/tests/slowpath/sp_limits

for mode in setrlimit syscall; do
	for routes in budget shim; do
		pol='limit=16G;oom=fail;wait=1ms'
		[ $routes = shim ] && pol="$pol;ctl=1"
		rm -f "$TMP/rec"
		out=$(GFP_POLICY=$pol GFP_RECORD=$TMP/rec LD_PRELOAD=$SHIM bounded 60 "$PROG" $mode 2>"$TMP/err") ||
			fail "$mode/$routes: exit $?: $out $(tail -3 "$TMP/err")"
		read -r first r1 second r2 <<<"$(sed 's/[a-z]*=//g' <<<"$out")"
		[ "$first" -gt 100 ] || fail "$mode/$routes: only $first blocks before the limit: $out"
		[ "$second" -lt "$first" ] || fail "$mode/$routes: $second blocks served after the limit: $out"
		[ "$r1" -ge 1 ] || fail "$mode/$routes: the first real failure met no slow path: $out"
		[ "$r2" -gt "$r1" ] || fail "$mode/$routes: the second real failure met no slow path: $out"
		grep -q '"event":"oom"' "$TMP/rec" || fail "$mode/$routes: no oom record: $(head -c 300 "$TMP/rec")"
		note "$mode/$routes: $out"
	done
done

# The watched routes (only failures shaped: oom=) jump to jemalloc for a
# small request where jemalloc cannot fail it, and watch every answer once
# it can: a real failure meets the slow path (the OOM step's warning).
for mode in setrlimit syscall; do
	rm -f "$TMP/log"
	out=$(GFP_POLICY='oom=fail;wait=1ms' GFP_LOG=$TMP/log LD_PRELOAD=$SHIM timeout 60 "$PROG" $mode 2>"$TMP/err") ||
		fail "$mode/watched: exit $?: $out $(tail -3 "$TMP/err")"
	grep -q 'the OOM step gave up (oom=fail)' "$TMP/log" ||
		fail "$mode/watched: the real failure met no slow path: $out $(head -c 300 "$TMP/log")"
	note "$mode/watched: $out"
done
