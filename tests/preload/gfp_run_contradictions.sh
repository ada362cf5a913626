#!/bin/bash
# gfp-run refuses a policy whose keys contradict each other before it runs
# anything, with status 125 and the shim's own words: a program it cannot
# start (missing, static) must not hide the error, and a program that
# starts must not run one line of main.
source "$TESTS/lib.sh"
HELLO=$BUILD/tests/preload/hello

n=0
while IFS= read -r policy; do
	[ -n "$policy" ] || continue
	n=$((n + 1))
	# The shim's message: "gfpshim: error: GFP_POLICY: WHY".
	bounded 60 env GFP_POLICY="$policy" LD_PRELOAD="$SHIM" "$HELLO" >"$TMP/out" 2>"$TMP/shim"
	expect_eq "shim, '$policy': status" 125 "$?"
	line=$(<"$TMP/shim")
	why=${line#gfpshim: error: GFP_POLICY: }
	[ "$why" != "$line" ] || fail "shim, '$policy': unexpected message: $line"
	# gfp-run, with a program that does not exist (it would say 127) and
	# with one that exists (main must not run).
	for prog in "$TMP/no-such-program" "$HELLO"; do
		bounded 60 "$GFP_RUN" --policy "$policy" -- "$prog" >"$TMP/out" 2>"$TMP/err"
		expect_eq "gfp-run, '$policy', $prog: status" 125 "$?"
		expect_eq "gfp-run, '$policy', $prog: main did not run" "" "$(<"$TMP/out")"
		expect_eq "gfp-run, '$policy', $prog: its message is the shim's" \
			"gfp-run: error: --policy (GFP_POLICY): $why" "$(<"$TMP/err")"
	done
done <<'EOF'
min_free=1M
limit=8M;min_free=6M
limit=32K
fail.probability=1;fail.min=1K;fail.max=10
kswapd=1
limit=1G;kswapd.psi=1
fail.site.call=3
reserve.thread=64K
limit.scope=tree
EOF
[ "$n" -ge 9 ] || fail "read $n policies"

# fail.site.hit=last is no contradiction to gfp-run, which counts the hits
# in a recording run first: a site never hit is a usage error, not 125.
bounded 60 "$GFP_RUN" --policy 'fail.site=00000000deadbeef' -- "$HELLO" >"$TMP/out" 2>"$TMP/err"
st=$?
[ "$st" != 125 ] || { cat "$TMP/err" >&2; fail "fail.site.hit=last refused as a contradiction"; }

# GFP_STRICT=0: the shim warns and drops the key; gfp-run leaves it to the
# shim, and the program runs.
bounded 60 env GFP_STRICT=0 "$GFP_RUN" --policy 'min_free=1M' -- "$HELLO" >"$TMP/out" 2>"$TMP/err"
expect_eq "GFP_STRICT=0: status" 0 "$?"
expect_contains "GFP_STRICT=0: the shim's warning" "$TMP/err" \
	"^gfpshim: warning: GFP_POLICY: min_free needs a limit .*\[min_free ignored: GFP_STRICT=0\]"
exit 0
