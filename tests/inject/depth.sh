#!/bin/bash
# fail.depth up to the table's 64: a malloc 46 frames below deep_root is
# failed by fail.sym=deep_root under fail.depth=64 and =47, not under 45 or
# the default 32 (before, every depth above 32 silently meant 32); 65 is
# refused before main.
source "$TESTS/lib.sh"
prog="$BUILD/tests/inject/inj_deep"
for want in 64:X 47:X 45:. 32:.; do
	depth=${want%%:*}
	out=$(GFP_POLICY="fail.probability=1;fail.sym=deep_root;fail.depth=$depth" \
		LD_PRELOAD="$SHIM" bounded 60 "$prog" 2>"$TMP/err")
	st=$?
	[ $st = 0 ] || { cat "$TMP/err" >&2; fail "fail.depth=$depth: status $st"; }
	expect_eq "fail.depth=$depth" "${want#*:}" "$out"
done
GFP_POLICY="fail.probability=1;fail.sym=deep_root;fail.depth=65" LD_PRELOAD="$SHIM" \
	bounded 60 "$prog" >/dev/null 2>"$TMP/err65"
expect_eq "fail.depth=65: status" 125 "$?"
expect_contains "fail.depth=65" "$TMP/err65" "fail.depth"
note "fail.depth=64 and 47 reach deep_root 46 frames up; 45 and 32 do not; 65 is refused"
