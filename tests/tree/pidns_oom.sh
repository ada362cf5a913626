#!/bin/bash
# The OOM step never signals a process that is not proven to be the member
# it chose. A plain `sleep`, no member of the tree, runs with pid S here; A
# is a member started in a PID namespace of its own, with pid S there
# (ns_last_pid), holding 40 MiB of a 64M tree. C, a member here, needs
# 30 MiB in 4 KiB requests and reaches the OOM step: A, the member with the
# most bytes, is its victim. C sees A as the holder of A's slot's lock
# (F_GETLK gives A's pid here), kills it through a pidfd, and gets its
# 30 MiB; its report names A by its pid here. The sleep, whose pid is A's
# pid in A's namespace, lives on. With the host's /proc in A's namespace,
# where A used to take the sleep's start time for its own and C's OOM step
# killed the sleep; with A's own /proc (--mount-proc); and with A putting
# /dev/null in the place of the shim's descriptor of the tree (dup2) before
# it allocates: the shim opens the tree again and takes its identity lock
# again (C still proves A), and leaves A's /dev/null alone.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
source "$TESTS/tree/members.sh"
need_pidns
[ "$(unshare --pid --fork --kill-child bash -c 'echo 41 >/proc/sys/kernel/ns_last_pid || exit 1; sh -c "echo \$\$" & wait' 2>/dev/null)" = 42 ] ||
	skip "cannot choose a pid in a new PID namespace (ns_last_pid)"

sleep 1000 &
S=$!
trap 'kill -KILL $S 2>/dev/null; members_kill; rm -rf "$TMP"' EXIT

# state PID: its state letter (Z for a zombie), or "gone".
state() {
	local line
	read -r line 2>/dev/null <"/proc/$1/stat" || { echo gone; return; }
	line=${line##*) }
	echo "${line%% *}"
}

for variant in :hold --mount-proc:hold --mount-proc:holdx; do
	mount=${variant%:*} mode=${variant#*:}
	name=A$mount-$mode
	export GFP_TREE=$TMP/$name.tree GFP_POLICY='limit=64M;limit.scope=tree;retries=4;wait=5ms;oom.victim_timeout=60s'
	# The namespace's init (bash, no member) makes the next pid S and
	# starts A with it.
	MEMBER_WRAP=(unshare --pid --fork --kill-child $mount bash -c \
		'echo $(($0 - 1)) >/proc/sys/kernel/ns_last_pid || exit 99; "$@" <&0 & wait $!' "$S")
	member_start "$name" "$mode" $((40 * MiB))
	MEMBER_WRAP=()
	expect_eq "$name: A's pid in its namespace, the sleep's here" "$S" "$(field "$TMP/$name.out" holding pid)"
	[ "$mode" = hold ] || expect_eq "$name: A's /dev/null in the shim's old place" true \
		"$(field "$TMP/$name.out" holding still_null)"
	a=$(member_host_pid "$name") || fail "$name: no pid of A here"
	rc=0
	bounded 60 env LD_PRELOAD="$SHIM" "$PROG" need $((30 * MiB)) </dev/null \
		>"$TMP/$name-C.out" 2>"$TMP/$name-C.err" || rc=$?
	[ $rc = 0 ] || { cat "$TMP/$name-C.err" >&2; fail "$name: the member that needs 30 MiB exited $rc"; }
	st=$(state "$S")
	[ "$st" != Z ] && [ "$st" != gone ] || fail "$name: the sleep ($S), no member, was killed (state $st)"
	expect_eq "$name: the sleep" sleep "$(cat "/proc/$S/comm")"
	expect_eq "$name: C's 30 MiB" $((30 * MiB)) "$(field "$TMP/$name-C.out" got bytes)"
	member_expect_killed "$name"
	/usr/bin/python3 "$TESTS/tree/oom_report.py" "$TMP/$name-C.err" \
		--requester "$(field "$TMP/$name-C.out" got pid)" --victim "$a" \
		--members "$a,$(field "$TMP/$name-C.out" got pid)" --victim-live-mib 40 --victim-adj 0 ||
		fail "$name: C's OOM report"
	note "$name: C killed A ($a here, $S in its namespace); the sleep $S lives"
done
