#!/bin/bash
# The stack and thread filters (fail.sym, fail.lib, fail.reject.*,
# fail.thread) in real programs that run in a UTF-8 locale: glibc's fnmatch
# allocates there, from inside malloc, which ran the filter again until the
# stack overflowed (git and python3 died of SIGSEGV before their first line).
# Their globs must be matched without allocating, and a filter that never
# matches must cost little: under LANG=C, python3 -c 'print(1)' took over
# 100 s with a never-matching fail.sym (an unwind with names per call); the
# answer is cached per call path, as GFP_RULES does. Every run is bounded.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"
need_prog git /usr/bin/python3
need_c_utf8
git_repo "$TMP/repo"
want_git=$(git -C "$TMP/repo" log -1 --format=%s)

# run TAG SECONDS LOCALE POLICY CMD...: as inj_run, bounded by SECONDS (a
# hang ends as status 124), under LANG=LC_ALL=LOCALE; timeout itself runs
# without the shim.
run() {
	local tag=$1 secs=$2 loc=$3 policy=$4
	shift 4
	rm -f "$TMP/$tag".*
	INJ_RC=0
	bounded "$secs" env GFP_POLICY="$policy" GFP_LOG="$TMP/$tag.log" \
		GFP_RECORD="$TMP/$tag.rec" LD_PRELOAD="$SHIM" LANG="$loc" LC_ALL="$loc" "$@" \
		>"$TMP/$tag.out" 2>"$TMP/$tag.err" </dev/null || INJ_RC=$?
	touch "$TMP/$tag.log" "$TMP/$tag.rec"
}

# quiet TAG WANT: exit 0, WANT printed, no injection.
quiet() {
	inj_ok "$1"
	expect_eq "$1: output" "$2" "$(cat "$TMP/$1.out")"
	expect_records "$1" injection 0
}

# Not fail.reject.sym=*: it rejects a call only when one of its frames has a
# name, and python3's first frames are static functions with none (a frame
# is named only inside its symbol's size).
PROGS=(git python3)
for loc in C.UTF-8 C; do
	for filter in 'fail.sym=nonexistent_zz' 'fail.lib=nonexistent_zz' \
		'fail.reject.lib=*' 'fail.thread=nomatch*' \
		'fail.sym=[[:upper:]]zz[!a-z]\q*'; do
		policy="fail.probability=1;$filter;fail.times=1"
		tag=$(echo "$loc-$filter" | tr -c 'A-Za-z0-9-' _)
		run "$tag-git" 60 "$loc" "$policy" git -C "$TMP/repo" log -1 --format=%s
		quiet "$tag-git" "$want_git"
		run "$tag-py" 60 "$loc" "$policy" /usr/bin/python3 -c 'print("caf\u00e9")'
		quiet "$tag-py" "café"
	done
	note "$loc: git log and python3 run whole under never-matching filters"
done

# A filter that matches still injects, once (fail.times=1), under UTF-8.
run thread_py 60 C.UTF-8 'fail.probability=1;fail.thread=pyth?n[0-9]*;fail.times=1' \
	/usr/bin/python3 -c 'print(1)'
[ "$INJ_RC" != 0 ] && [ "$INJ_RC" != 124 ] && [ "$INJ_RC" -lt 128 ] ||
	{ inj_show thread_py; fail "thread_py: expected python3 to fail cleanly, status $INJ_RC"; }
expect_records thread_py injection 1
run thread_git 60 C.UTF-8 'fail.probability=1;fail.thread=git;fail.times=1' \
	git -C "$TMP/repo" log -1 --format=%s
# git's xmalloc tries again after a failure, and succeeds.
[ "$INJ_RC" != 124 ] && [ "$INJ_RC" -lt 128 ] ||
	{ inj_show thread_git; fail "thread_git: status $INJ_RC"; }
expect_records thread_git injection 1
# inj_stack's known functions: the stack filters pick the same calls as in
# stack.sh, in a UTF-8 locale.
for f in 'fail.sym=stack_alpha*|alpha=X beta=. inner=. lib=. dup=.' \
	'fail.sym=stack_[a-b]eta_alloc|alpha=. beta=X inner=. lib=. dup=.' \
	'fail.lib=libinjlib*|alpha=. beta=. inner=. lib=X dup=.' \
	'fail.reject.sym=stack_alpha*|alpha=. beta=X inner=X lib=X dup=X'; do
	run stack 30 C.UTF-8 "fail.probability=1;${f%%|*}" "$INJ/inj_stack"
	inj_ok stack
	expect_eq "inj_stack under ${f%%|*}" "${f#*|}" "$(cat "$TMP/stack.out")"
done
note "matching filters inject as before"

# The cost of a never-matching filter, in LANG=C: python3 -c 'print(1)'
# took over 100 s (0.03 s without the shim), and a loop of 20000 mallocs
# from one call path (bytes of 1000 bypass pymalloc) over 30 s: the frames
# were unwound and named per call. Cached per call path, the loop costs what
# the start does, whatever its length: 200000 calls (over 300 s uncached)
# end well within a generous 120 s, however loaded the machine.
LOOP='for i in range(200000): b = bytes(1000)
print(1)'
for filter in 'fail.sym=nonexistent_zz' 'fail.lib=nonexistent_zz' 'fail.thread=nomatch*'; do
	for prog in print loop; do
		code='print(1)'
		[ $prog = print ] || code=$LOOP
		t0=$SECONDS
		run speed 120 C "fail.probability=1;$filter;fail.times=1" \
			env PYTHONCOERCECLOCALE=0 /usr/bin/python3 -c "$code"
		[ "$INJ_RC" != 124 ] || fail "$filter: python3 $prog did not end within 120 s"
		quiet speed 1
		note "$filter: python3 $prog: $((SECONDS - t0)) s"
	done
done
