#!/bin/bash
# glibc malloc settings that jemalloc ignores get one warning each, naming
# the jemalloc equivalent; glibc_warn=0 silences them.
source "$TESTS/lib.sh"
HELLO=$BUILD/tests/preload/hello
env MALLOC_PERTURB_=165 MALLOC_CHECK_=3 GLIBC_TUNABLES=glibc.malloc.tcache_count=0:glibc.cpu.hwcaps=-AVX LD_PRELOAD="$SHIM" "$HELLO" >/dev/null 2>"$TMP/err" || fail "run failed"
expect_contains perturb "$TMP/err" "^gfpshim: warning: MALLOC_PERTURB_ is set but has no effect.*MALLOC_CONF=junk:true"
expect_contains check "$TMP/err" "^gfpshim: warning: MALLOC_CHECK_ is set"
expect_contains tunables "$TMP/err" "GLIBC_TUNABLES sets glibc.malloc.tcache_count, which has no effect"
grep -q hwcaps "$TMP/err" && fail "warned about a tunable that is not malloc's"
expect_eq "one line per variable" 3 "$(wc -l <"$TMP/err")"
env MALLOC_PERTURB_=165 GFP_POLICY=glibc_warn=0 LD_PRELOAD="$SHIM" "$HELLO" >/dev/null 2>"$TMP/err" || fail "run failed"
[ ! -s "$TMP/err" ] || fail "glibc_warn=0 still warned: $(cat "$TMP/err")"
# A tunable's name is quoted: ESC and newline as \xNN, one line.
env GLIBC_TUNABLES=$'glibc.malloc.x\033[31m\ny=1' LD_PRELOAD="$SHIM" "$HELLO" >/dev/null 2>"$TMP/err" || fail "run failed"
expect_contains "tunable quoted" "$TMP/err" 'GLIBC_TUNABLES sets glibc\.malloc\.x\\x1b\[31m\\x0ay, which'
expect_eq "quoted tunable: one line" 1 "$(wc -l <"$TMP/err")"
