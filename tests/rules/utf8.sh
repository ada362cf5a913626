#!/bin/bash
# GFP_RULES' globs (thread:, sym:, lib:) in real programs in a UTF-8 locale,
# where glibc's fnmatch allocates: a thread: rule matched per request from
# inside malloc, so git and python3 died of SIGSEGV (the allocation ran the
# rule again). fail.ignore_wait=1 makes every request's context matter (only
# those that may not sleep are eligible), so the rules run on every call; a
# rule that gives NOWAIT makes its requests eligible, and the first one fails
# (fail.times=1). Every run is bounded.
source "$TESTS/lib.sh"
source "$TESTS/rules/rules.sh"
need_prog git /usr/bin/python3
need_c_utf8
git_repo "$TMP/repo"
want_git=$(git -C "$TMP/repo" log -1 --format=%s)
POLICY='fail.probability=1;fail.ignore_wait=1;fail.times=1'

# run TAG RULES CMD...: CMD under the shim, GFP_RULES=RULES and POLICY in
# C.UTF-8, within 60 s; leaves TAG.out, TAG.rec, RC.
run() {
	local tag=$1 rules=$2
	shift 2
	RC=0
	rm -f "$TMP/$tag".*
	bounded 60 env GFP_RULES="$rules" GFP_POLICY="$POLICY" GFP_RECORD="$TMP/$tag.rec" \
		GFP_LOG="$TMP/$tag.log" LD_PRELOAD="$SHIM" LANG=C.UTF-8 LC_ALL=C.UTF-8 "$@" \
		>"$TMP/$tag.out" 2>"$TMP/$tag.err" </dev/null || RC=$?
	touch "$TMP/$tag.rec" "$TMP/$tag.log"
}
injections() { grep -c '"event":"injection"' "$TMP/$1.rec"; }

for rule in 'thread:nomatch* => NOWAIT' 'sym:nonexistent_zz => NOWAIT' \
	'lib:nonexistent_zz => NOWAIT' 'thread:[[:upper:]]*[!a-z] & size>1 => NOWAIT'; do
	run git "$rule" git -C "$TMP/repo" log -1 --format=%s
	[ "$RC" = 0 ] || { cat "$TMP/git.err" >&2; fail "git under '$rule': status $RC"; }
	expect_eq "git under '$rule'" "$want_git" "$(cat "$TMP/git.out")"
	expect_eq "git injections under '$rule'" 0 "$(injections git)"
	run py "$rule" /usr/bin/python3 -c 'print("caf\u00e9")'
	[ "$RC" = 0 ] || { cat "$TMP/py.err" >&2; fail "python3 under '$rule': status $RC"; }
	expect_eq "python3 under '$rule'" "café" "$(cat "$TMP/py.out")"
	expect_eq "python3 injections under '$rule'" 0 "$(injections py)"
done
note "git and python3 run whole under rules that match nothing"

# Rules that match: their requests become NOWAIT, eligible, and one fails.
for rule in 'thread:pyth?n[0-9]* => NOWAIT' 'lib:pyth[a-z]n* => NOWAIT' \
	'sym:[Pp]y* => NOWAIT'; do
	run py "$rule" /usr/bin/python3 -c 'print(1)'
	[ "$RC" != 0 ] && [ "$RC" != 124 ] && [ "$RC" != 139 ] ||
		{ cat "$TMP/py.err" >&2; fail "python3 under '$rule': expected a failure, status $RC"; }
	expect_eq "python3 injections under '$rule'" 1 "$(injections py)"
	grep -q '"event":"injection".*NOWAIT' "$TMP/py.rec" ||
		{ head -c 2000 "$TMP/py.rec" >&2; fail "'$rule': the injection is not NOWAIT"; }
done
# git's xmalloc tries again after a failure, and succeeds.
run git 'thread:git => NOWAIT' git -C "$TMP/repo" log -1 --format=%s
[ "$RC" != 124 ] && [ "$RC" -lt 128 ] ||
	{ cat "$TMP/git.err" >&2; fail "git under 'thread:git => NOWAIT': status $RC"; }
expect_eq "git injections under 'thread:git'" 1 "$(injections git)"
note "rules that match give their requests NOWAIT, in C.UTF-8"
