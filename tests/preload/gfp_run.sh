#!/bin/bash
# gfp-run: finds the library, validates the policy like the shim, explains a
# missing or static program, and lists every key of the table.
source "$TESTS/lib.sh"

"$GFP_RUN" -- /bin/sh -c 'echo "$LD_PRELOAD"' >"$TMP/out" || fail "gfp-run sh failed"
expect_contains "LD_PRELOAD set" "$TMP/out" "libgfpshim\.so"
LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6 "$GFP_RUN" -- /bin/sh -c 'echo "$LD_PRELOAD"' >"$TMP/out"
expect_contains "existing LD_PRELOAD kept after ours" "$TMP/out" "libgfpshim\.so:/lib/x86_64-linux-gnu/libc\.so\.6$"

"$GFP_RUN" --policy 'stats=totals' --report "$TMP/r.json" -- "$BUILD/tests/preload/hello" >/dev/null || fail "run with --report failed"
expect_contains "report written" "$TMP/r.json" '"malloc":\{"calls":[1-9]'

"$GFP_RUN" --policy 'stats=bogus' -- /bin/true 2>"$TMP/err"
expect_eq "bad policy status" 125 "$?"
expect_contains "bad policy message" "$TMP/err" "^gfp-run: error: --policy \(GFP_POLICY\): bad value 'bogus' for key 'stats'"

"$GFP_RUN" -- no-such-program-xyz 2>"$TMP/err"
expect_eq "missing program status" 127 "$?"
expect_contains "missing program message" "$TMP/err" "no-such-program-xyz: command not found"

"$GFP_RUN" 2>"$TMP/err"
expect_eq "no program status" 2 "$?"

# -static and -static-pie (a dynamic section, no interpreter) alike: ld.so
# never runs them. ld.so itself, run as a program, has no interpreter either
# but is not static: it loads the program and the preload.
for prog in hello_static hello_static_pie; do
	[ -x "$BUILD/tests/preload/$prog" ] || continue
	"$GFP_RUN" -- "$BUILD/tests/preload/$prog" 2>"$TMP/err"
	expect_eq "$prog status" 126 "$?"
	expect_contains "$prog message" "$TMP/err" "statically linked"
	"$BUILD/tools/gfp-sweep" -- "$BUILD/tests/preload/$prog" >/dev/null 2>"$TMP/err"
	expect_eq "$prog sweep status" 126 "$?"
	expect_contains "$prog sweep message" "$TMP/err" "statically linked"
done
rm -f "$TMP/r.json"
"$GFP_RUN" --policy 'stats=totals' --report "$TMP/r.json" -- /lib64/ld-linux-x86-64.so.2 \
	"$BUILD/tests/preload/hello" >/dev/null || fail "hello through ld.so failed"
expect_contains "hello through ld.so reported" "$TMP/r.json" '"malloc":\{"calls":[1-9]'

"$GFP_RUN" --log "$TMP/log" --policy confirm=1 -- "$BUILD/tests/preload/hello" >/dev/null 2>&1
expect_contains "--log" "$TMP/log" "gfpshim: info:"

"$GFP_RUN" --list-keys >"$TMP/keys" || fail "--list-keys failed"
while read -r key; do
	grep -q "^$key " "$TMP/keys" || fail "--list-keys misses $key"
done < <(sed -n 's/^KEY([a-z_0-9]*, "\([^"]*\)".*/\1/p' "$SRC/src/policy/keys.def")
[ "$(grep -c '^KEY(' "$SRC/src/policy/keys.def")" -ge 3 ] || fail "keys.def parse"

# %p in GFP_REPORT: one report per process.
GFP_REPORT="$TMP/rep.%p.json" LD_PRELOAD=$SHIM /bin/sh -c "$BUILD/tests/preload/hello; $BUILD/tests/preload/hello; :" >/dev/null
expect_eq "a report per process, dash's too (it leaves by _exit)" 3 "$(ls "$TMP"/rep.*.json | wc -l)"
