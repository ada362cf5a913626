#!/bin/bash
# reserve.thread needs something to reserve from: without limit= or
# reserve.prefault=1 the process exits 125 before main with one line naming
# the key and both fixes; with either it runs. GFP_STRICT=0 warns and runs.
# A bad reserve.mode names the key and its choices. gfp-run lists the keys.
source "$TESTS/lib.sh"
source "$TESTS/reserve/rs.sh"

t=$(command -v true)
# No GFP_LOG: the one line goes to stderr.
rs_run() { # rs_run TAG POLICY [VAR=VALUE...] CMD...
	local tag=$1 policy=$2
	shift 2
	RS_RC=0
	env LD_PRELOAD="$SHIM" GFP_POLICY="$policy" "$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err" || RS_RC=$?
}
rs_run c 'reserve.thread=64K' "$t"
expect_eq "reserve.thread without limit or prefault: status" 125 "$RS_RC"
expect_contains "the error names the key and the fixes" "$TMP/c.err" \
	"^gfpshim: error: GFP_POLICY: reserve.thread .*limit=SIZE.*reserve.prefault=1"
[ "$(grep -c . "$TMP/c.err")" = 1 ] || { cat "$TMP/c.err" >&2; fail "more than one line"; }
for ok in 'reserve.thread=64K;limit=8M' 'reserve.thread=64K;reserve.prefault=1'; do
	rs_run c "$ok" "$t"
	expect_eq "$ok: status" 0 "$RS_RC"
done
rs_run c 'reserve.thread=64K' GFP_STRICT=0 "$t"
expect_eq "GFP_STRICT=0: status" 0 "$RS_RC"
expect_contains "GFP_STRICT=0 warns" "$TMP/c.err" "warning: .*reserve.thread.*GFP_STRICT=0"
rs_run c 'reserve.mode=token' "$t"
expect_eq "bad reserve.mode: status" 125 "$RS_RC"
expect_contains "bad reserve.mode" "$TMP/c.err" "'reserve.mode'.*watermark\|tokens"
"$GFP_RUN" --list-keys >"$TMP/keys" || fail "gfp-run --list-keys failed"
for k in reserve.mode reserve.prefault reserve.thread; do
	expect_contains "gfp-run --list-keys" "$TMP/keys" "^$k "
done
