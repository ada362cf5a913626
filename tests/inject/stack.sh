#!/bin/bash
# Stack filters on inj_stack's known functions (names from the ELF symbol
# tables): fail.sym / fail.lib require a function / module matching the glob
# among the first fail.depth frames outside the shim (default 32), and
# fail.reject.sym / fail.reject.lib exempt such calls. libc's frames count
# (strdup's malloc is called from libc). The stack filter is the last check:
# interval counts calls the filter then drops, and a dropped call does not
# use up fail.times.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

stack_expect() { # TAG POLICY EXPECTED
	inj_run "$1" "fail.probability=1;$2" "$INJ/inj_stack"
	inj_ok "$1"
	local got
	got=$(cat "$TMP/$1.out")
	[ "$got" = "$3" ] || { inj_show "$1"; fail "$1: policy '$2': expected '$3', got '$got'"; }
}

ALL='alpha=X beta=X inner=X lib=X dup=X'
stack_expect none '' "$ALL"
stack_expect sym 'fail.sym=stack_alpha*' 'alpha=X beta=. inner=. lib=. dup=.'
stack_expect sym_q 'fail.sym=stack_?eta_alloc' 'alpha=. beta=X inner=. lib=. dup=.'
stack_expect sym_lib 'fail.sym=injlib_*' 'alpha=. beta=. inner=. lib=X dup=.'
stack_expect sym_none 'fail.sym=no_such_function' 'alpha=. beta=. inner=. lib=. dup=.'
expect_records sym_none injection 0
# A caller further up: stack_outer calls stack_inner_alloc, which mallocs.
stack_expect sym_outer 'fail.sym=stack_outer' 'alpha=. beta=. inner=X lib=. dup=.'
stack_expect sym_outer_d1 'fail.sym=stack_outer;fail.depth=1' 'alpha=. beta=. inner=. lib=. dup=.'
stack_expect sym_outer_d2 'fail.sym=stack_outer;fail.depth=2' 'alpha=. beta=. inner=X lib=. dup=.'
stack_expect sym_inner_d1 'fail.sym=stack_inner_alloc;fail.depth=1' 'alpha=. beta=. inner=X lib=. dup=.'
stack_expect sym_main 'fail.sym=main' "$ALL"
stack_expect sym_main_d1 'fail.sym=main;fail.depth=1' 'alpha=. beta=. inner=. lib=. dup=.'
# libc's strdup is the first frame of dup.
stack_expect sym_strdup 'fail.sym=*strdup*' 'alpha=. beta=. inner=. lib=. dup=X'
stack_expect sym_dup 'fail.sym=stack_dup;fail.depth=1' 'alpha=. beta=. inner=. lib=. dup=.'
stack_expect sym_dup2 'fail.sym=stack_dup;fail.depth=2' 'alpha=. beta=. inner=. lib=. dup=X'
note "fail.sym and fail.depth"

stack_expect lib 'fail.lib=libinjlib*' 'alpha=. beta=. inner=. lib=X dup=.'
stack_expect lib_exe 'fail.lib=inj_stack' "$ALL"
stack_expect lib_exe_d1 'fail.lib=inj_stack;fail.depth=1' 'alpha=X beta=X inner=X lib=. dup=.'
stack_expect lib_libc_d1 'fail.lib=libc.so*;fail.depth=1' 'alpha=. beta=. inner=. lib=. dup=X'
stack_expect lib_none 'fail.lib=libnothing.so' 'alpha=. beta=. inner=. lib=. dup=.'
stack_expect lib_shim 'fail.lib=libgfpshim*' 'alpha=. beta=. inner=. lib=. dup=.'
note "fail.lib"

stack_expect reject 'fail.reject.sym=stack_alpha*' 'alpha=. beta=X inner=X lib=X dup=X'
stack_expect reject_outer 'fail.reject.sym=stack_outer' 'alpha=X beta=X inner=. lib=X dup=X'
stack_expect reject_main 'fail.reject.sym=main' 'alpha=. beta=. inner=. lib=. dup=.'
stack_expect reject_lib 'fail.reject.lib=libinjlib*' 'alpha=X beta=X inner=X lib=. dup=X'
stack_expect reject_libc_d1 'fail.reject.lib=libc.so*;fail.depth=1' 'alpha=X beta=X inner=X lib=X dup=.'
stack_expect sym_and_reject 'fail.sym=stack_*;fail.reject.sym=stack_beta*' 'alpha=X beta=. inner=X lib=. dup=X'
stack_expect lib_and_reject 'fail.lib=inj_stack;fail.reject.sym=stack_inner_alloc' 'alpha=X beta=X inner=. lib=X dup=X'
note "fail.reject.sym and fail.reject.lib"

# Last in order: interval counts alpha (1st) and beta (2nd) before the filter.
stack_expect order_interval 'fail.interval=2;fail.sym=stack_beta*' 'alpha=. beta=X inner=. lib=. dup=.'
stack_expect order_interval2 'fail.interval=2;fail.sym=stack_alpha*' 'alpha=. beta=. inner=. lib=. dup=.'
# A call the filter drops does not use up times.
stack_expect order_times 'fail.times=1;fail.sym=stack_beta*' 'alpha=. beta=X inner=. lib=. dup=.'
note "the stack filter is the last check"

# The same decisions when nothing records or logs the injections.
for c in 'fail.sym=stack_outer:alpha=. beta=. inner=X lib=. dup=.' \
	'fail.lib=libinjlib*:alpha=. beta=. inner=. lib=X dup=.' \
	'fail.reject.sym=stack_alpha*:alpha=. beta=X inner=X lib=X dup=X'; do
	got=$(GFP_POLICY="fail.probability=1;${c%%:*}" LD_PRELOAD=$SHIM "$INJ/inj_stack") || fail "${c%%:*} without GFP_RECORD: status $?"
	expect_eq "${c%%:*} without GFP_RECORD" "${c#*:}" "$got"
done
note "stack filters without GFP_RECORD"
