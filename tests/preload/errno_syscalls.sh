#!/bin/bash
# free keeps errno and a failed posix_memalign leaves it alone even when
# jemalloc's own madvise and mmap fail inside them (a seccomp filter makes
# them fail; decay 0 makes every large free purge at once), while the
# program's own failing madvise and mmap still set it (preload/oscalls.c). Plain jemalloc
# 5.3 is the control: its free changes errno there, so this test can fail.
source "$TESTS/lib.sh"
prog="$BUILD/tests/preload/errno_syscalls"
export MALLOC_CONF=dss:disabled,dirty_decay_ms:0,muzzy_decay_ms:0
je=$(ldd "$SHIM" | awk '/libjemalloc/ {print $3}')
[ -n "$je" ] || fail "cannot find the jemalloc that $SHIM links"

out=$(LD_PRELOAD=$je "$prog"); rc=$?
[ $rc -eq 77 ] && skip "no seccomp filters here"
[ $rc -eq 0 ] || fail "under plain jemalloc: exit $rc: $out"
# Without the control's failures the shim's "kept" would prove nothing.
[ "$out" = "free=changed huge=changed thread=changed posix_memalign=changed own=set" ] ||
	skip "plain jemalloc keeps errno here ($out): nothing for the shim to show"
note "control: plain jemalloc changes errno ($out)"

while read -r what policy rules; do
	out=$(GFP_POLICY=${policy#-} GFP_RULES=${rules#-} LD_PRELOAD=$SHIM "$prog" 2>"$TMP/err") ||
		fail "$what: exit $?: $out $(head -3 "$TMP/err")"
	expect_eq "$what" "free=kept huge=kept thread=kept posix_memalign=kept own=set" "$out"
	note "$what: $out"
done <<'MODES'
idle - -
armed fail.probability=0.000000001 -
budget limit=16G -
stats stats=totals -
sites stats=sites -
reserve.thread limit=16G;reserve.thread=1M -
rules - lib:libnotloaded.so*=>NORETRY
MODES
