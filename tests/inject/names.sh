#!/bin/bash
# Frame names (doc/injection.md): a frame is named only by a function symbol
# whose size covers its address, else it reads as module+offset and matches
# no fail.sym / fail.reject.sym / GFP_RULES sym: glob. libinjnames.so has no
# .symtab, so its static hidden_alloc, 8 KiB past the start of the exported
# names_exported_big, has no name (libunwind 1.6 called it
# names_exported_big+0x2019); libinjnames_full.so keeps .symtab and names it.
# The same check on sqlite3 and git, whose static functions read
# sqlite3ApiExit+0xd4 and error+0x6229 before.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"
SYMSIZE="/usr/bin/python3 $TESTS/inject/symsize.py"
LIBC=$(ldd "$INJ/inj_names" | awk '$1 ~ /^libc\.so/ {print $3}')
[ -f "$LIBC" ] || fail "no libc path in: $(ldd "$INJ/inj_names")"

# names_expect TAG PROG POLICY EXPECTED [RULES]
names_expect() {
	GFP_RULES=${5:-} inj_run "$1" "fail.probability=1;$3" "$INJ/$2"
	inj_ok "$1"
	local got
	got=$(cat "$TMP/$1.out")
	[ "$got" = "hidden=$4" ] || { inj_show "$1"; fail "$1: policy '$3': expected hidden=$4, got '$got'"; }
}

names_expect stripped inj_names 'fail.verbose=1' X
expect_contains "hidden_alloc as module+offset" "$TMP/stripped.log" \
	'^ *#0 0x[0-9a-f]+ \(libinjnames\.so\+0x[0-9a-f]+\)$'
expect_contains "its caller named" "$TMP/stripped.log" \
	'^ *#1 names_call_hidden\+0x[0-9a-f]+ \(libinjnames\.so\+0x[0-9a-f]+\)$'
! grep -q names_exported_big "$TMP/stripped.log" "$TMP/stripped.rec" ||
	{ inj_show stripped; fail "a frame named after names_exported_big, which does not hold it"; }
frames=$($REC get "$TMP/stripped.rec" injection frames)
case "$frames" in
"libinjnames.so ?;libinjnames.so names_call_hidden+0x"*) ;;
*) fail "record frames: expected 'libinjnames.so ?;libinjnames.so names_call_hidden+0x...', got '$frames'" ;;
esac
n=$($SYMSIZE "$TMP/stripped.log" "$BUILD/tests/inject/libinjnames.so" "$LIBC" "$INJ/inj_names") ||
	fail "$n"
note "stripped: hidden_alloc is module+offset in the log and the record; $n named frames hold"

names_expect sym_big inj_names 'fail.sym=names_exported_big' .
names_expect sym_caller inj_names 'fail.sym=names_call_hidden' X
names_expect reject_big inj_names 'fail.reject.sym=names_exported_big' X
# NOFAIL is never failed at entry: a matching rule shows as '.'.
names_expect rule_big inj_names '' X 'sym:names_exported_big => NOFAIL'
names_expect rule_caller inj_names '' . 'sym:names_call_hidden => NOFAIL'
note "fail.sym, fail.reject.sym and sym: rules do not match a symbol that does not hold the frame"

# A one-line warning's "in FUNC" is the frame that made the request, as
# module+offset when it has no name: not names_exported_big, nor the named
# names_call_hidden further up. One attempt fails, so the slow path runs.
misuse_line() { # TAG PROG: the NOFAIL misuse warning of a 10000-byte malloc
	GFP_RULES='size>8K => NOFAIL' inj_run "$1" 'fail.probability=1;fail.where=attempt;fail.times=1' \
		"$INJ/$2" 10000
	inj_ok "$1"
	grep 'NOFAIL allocation of 10000 bytes' "$TMP/$1.log"
}
line=$(misuse_line misuse inj_names)
case "$line" in
*"(above 8192) in libinjnames.so+0x"[0-9a-f]*": large must-succeed"*) ;;
*) inj_show misuse; fail "misuse warning: expected 'in libinjnames.so+0x...', got '$line'" ;;
esac
line=$(misuse_line misuse_full inj_names_full)
case "$line" in
*"(above 8192) in hidden_alloc: large must-succeed"*) ;;
*) inj_show misuse_full; fail "misuse warning with .symtab: expected 'in hidden_alloc', got '$line'" ;;
esac
note "one-line warnings name the calling frame, or its module+offset"

names_expect full inj_names_full 'fail.verbose=1' X
expect_contains "hidden_alloc named from .symtab" "$TMP/full.log" \
	'^ *#0 hidden_alloc\+0x[0-9a-f]+ \(libinjnames_full\.so\+0x[0-9a-f]+\)$'
n=$($SYMSIZE "$TMP/full.log" "$BUILD/tests/inject/libinjnames_full.so" "$LIBC" "$INJ/inj_names_full") ||
	fail "$n"
[ "$n" -ge 4 ] || fail "only $n named frames in $TMP/full.log"
names_expect full_sym inj_names_full 'fail.sym=hidden_alloc;fail.depth=1' X
note "with .symtab: hidden_alloc named, $n named frames hold"

# sqlite3's statics read sqlite3ApiExit+0xd4 (18 bytes) before.
if [ -x /usr/bin/sqlite3 ]; then
	LIBSQLITE=$(ldd /usr/bin/sqlite3 | awk '$1 ~ /^libsqlite3\.so/ {print $3}')
	LANG=C GFP_POLICY='fail.probability=0.05;fail.seed=3;fail.verbose=1' GFP_LOG=$TMP/sqlite.log \
		LD_PRELOAD=$SHIM bounded 60 /usr/bin/sqlite3 :memory: \
		'create table t(a); insert into t values(1); select * from t;' >/dev/null 2>&1 </dev/null || true
	[ "$(grep -c FAULT_INJECTION "$TMP/sqlite.log")" -ge 1 ] || fail "no injection logged for sqlite3"
	n=$($SYMSIZE "$TMP/sqlite.log" /usr/bin/sqlite3 "$LIBSQLITE" "$LIBC") || fail "$n"
	note "sqlite3: $n named frames of sqlite3, libsqlite3 and libc hold their address"
else
	note "SKIP sqlite3: not installed"
fi

GIT=$(command -v git) || { note "SKIP git: not installed"; exit 0; }
# Failures at 5% of git init's requests: git reports them and exits.
rm -rf "$TMP/repo"
LANG=C GFP_POLICY='fail.probability=0.05;fail.seed=3;fail.verbose=1' GFP_LOG=$TMP/git.log \
	LD_PRELOAD=$SHIM bounded 60 "$GIT" init -q "$TMP/repo" >/dev/null 2>&1 </dev/null || true
[ "$(grep -c FAULT_INJECTION "$TMP/git.log")" -ge 1 ] || fail "no injection logged for git init"
n=$($SYMSIZE "$TMP/git.log" "$GIT" "$LIBC") || fail "$n"
note "git init: $n named frames of git and libc hold their address"
