#!/bin/bash
# The start-up gate: by default nothing is injected before main (here the
# program's own constructor) nor counted toward nth, so fail.nth=1 is main's
# first request and the injection record says call 1. With fail.startup=1
# the constructor's request is injected when a filter selects it, counted
# (its call number C >= 1 fails it under fail.nth=C) and main's first request
# comes after it. The same holds for the requests ld.so makes after main
# (dlopen of libm): not injected nor counted by default nor with
# fail.startup=1 (which is the program's start-up, not the loader's),
# injected with fail.ldso=1.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

ctor_expect() { # TAG POLICY EXPECTED
	inj_run "$1" "$2" "$INJ/inj_ctor"
	inj_ok "$1"
	local got
	got=$(cat "$TMP/$1.out")
	[ "$got" = "$3" ] || { inj_show "$1"; fail "$1: policy '$2': expected '$3', got '$got'"; }
}
call_of() { $REC get "$TMP/$1.rec" injection call; }

ctor_expect plain '' 'ctor=. main=...'
ctor_expect nth1 'fail.nth=1' 'ctor=. main=X..'
expect_eq "nth=1: call of the injection" 1 "$(call_of nth1)"
ctor_expect nth3 'fail.nth=3' 'ctor=. main=..X'
ctor_expect p1 'fail.probability=1;fail.times=1' 'ctor=. main=X..'
ctor_expect p1_all 'fail.probability=1' 'ctor=. main=XXX'
ctor_expect ctor_sym 'fail.probability=1;fail.sym=ctor_alloc' 'ctor=. main=...'
expect_records ctor_sym injection 0
ctor_expect main_sym 'fail.probability=1;fail.times=1;fail.sym=main_alloc' 'ctor=. main=X..'
expect_eq "main's first request is call 1" 1 "$(call_of main_sym)"
note "before main: not injected, not counted"

ctor_expect s_ctor_sym 'fail.startup=1;fail.probability=1;fail.sym=ctor_alloc' 'ctor=X main=...'
expect_records s_ctor_sym injection 1
C=$(call_of s_ctor_sym)
[ "$C" -ge 1 ] || fail "startup=1: call of the constructor's request: $C"
expect_contains "startup=1: the injection is in ctor_alloc" "$TMP/s_ctor_sym.rec" '"symbol":"ctor_alloc\+0x'
ctor_expect s_nth "fail.startup=1;fail.nth=$C" 'ctor=X main=...'
ctor_expect s_main_sym 'fail.startup=1;fail.probability=1;fail.times=1;fail.sym=main_alloc' 'ctor=. main=X..'
M=$(call_of s_main_sym)
[ "$M" -gt "$C" ] || fail "startup=1: main's first request is call $M, not after the constructor's ($C)"
ctor_expect s_nth_main "fail.startup=1;fail.nth=$M" 'ctor=. main=X..'
note "fail.startup=1: the constructor's request is call $C, main's first is call $M"

# Libraries loaded only because the shim is (Debian's libjemalloc needs
# libstdc++) make requests before main that are not the program's: a C
# program's first eligible call is its own constructor's. A C++ program
# needs libstdc++ itself, and libstdc++'s start-up request (its exception
# emergency pool) stays the program's: its first eligible call.
expect_eq "startup=1: the constructor's request is the first eligible call" 1 "$C"
ctor_expect s_nth1 'fail.startup=1;fail.nth=1' 'ctor=X main=...'
expect_records s_nth1 injection 1
ln -s "$SHIM" "$TMP/shim-é.so"
LD_PRELOAD="$TMP/shim-é.so" GFP_POLICY='fail.startup=1;fail.nth=1' \
	bounded 60 "$INJ/inj_ctor" >"$TMP/link.out" 2>"$TMP/link.err" ||
	fail "through a link to the shim: exit $?: $(tail -3 "$TMP/link.err")"
expect_eq "through a link to the shim" 'ctor=X main=...' "$(cat "$TMP/link.out")"
inj_run cxx_nth1 'fail.startup=1;fail.nth=1' "$INJ/inj_cxx" ops n
expect_records cxx_nth1 injection 1
first_module=$(/usr/bin/python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print([r for r in recs if r["event"] == "injection"][0]["frames"][0]["module"])' "$TMP/cxx_nth1.rec")
expect_eq "C++: the module of the first eligible call" libstdc++.so.6 "$first_module"
# The same with a constructor's detached threads, one that allocates and
# exits, one that only frees: with every libstdc++ frame selected, nothing
# of this C program is injected before main, and its own requests pass.
inj_run threads 'fail.startup=1;fail.probability=1;fail.lib=libstdc++*;fail.depth=1' \
	"$INJ/inj_ctor_threads"
inj_ok threads
expect_eq "threads: requests failed" 'ctor=0 main=.' "$(cat "$TMP/threads.out")"
expect_records threads injection 0
note "before main, only the program's libraries count: libstdc++ in a C++ program, not in a C one"

# ld.so's requests: dlopen succeeds at probability 1 and is not counted.
seq_expect dl_p1 'fail.probability=1' '.X.X' 'D0 m100 D0 m100'
seq_expect dl_nth1 'fail.nth=1' '.X..' 'D0 m100 D0 m100'
seq_expect dl_nth2 'fail.nth=2' '...X' 'D0 m100 D0 m100'
seq_expect dl_ld 'fail.probability=1;fail.lib=ld-linux*;fail.depth=1' '....' 'D0 m100 D0 m100'
expect_records dl_ld injection 0
seq_expect s_dl_ld 'fail.startup=1;fail.probability=1;fail.lib=ld-linux*;fail.depth=1' '....' 'D0 m100 D0 m100'
expect_records s_dl_ld injection 0
seq_expect l_dl_ld 'fail.ldso=1;fail.probability=1;fail.lib=ld-linux*;fail.depth=1' 'X.X.' 'D0 m100 D0 m100'
note "ld.so's requests: exempt by default and with fail.startup=1, injected with fail.ldso=1"
