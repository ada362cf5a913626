#!/bin/bash
# A bad GFP_RULES exits 125 before main with one line naming the rule, the
# column and what was expected there; GFP_STRICT=0 makes that line a
# warning and the program runs.
source "$TESTS/lib.sh"
source "$TESTS/rules/rules.sh"

# bad RULES RULE_N COLUMN AT EXPECTED: the message, with a grep -E pattern
# for what was expected.
bad() {
	local rc=0 out=$TMP/bad.out err=$TMP/bad.err
	GFP_RULES=$1 LD_PRELOAD=$SHIM "$RULES_PROG" nofill a:100 >"$out" 2>"$err" || rc=$?
	local what="GFP_RULES='$1'"
	[ "$rc" = 125 ] || { cat "$err" >&2; fail "$what: status $rc, expected 125"; }
	[ ! -s "$out" ] || fail "$what: main ran: $(cat "$out")"
	expect_eq "$what: lines on stderr" 1 "$(wc -l <"$err")"
	local want="^gfpshim: error: GFP_RULES: rule $2, column $3 \\(at '$4'\\): expected $5"
	expect_contains "$what" "$err" "$want"
	note "$what: $(cat "$err")"
}
bad 'sym:caller_a => ' 1 17 'the end' "flags after '=>'"
bad 'sym:caller_a NORETRY' 1 14 'NORETRY' "'&' and another matcher, or '=>'"
bad 'foo:bar => NORETRY' 1 1 'foo:bar => N' 'a matcher: sym:GLOB, lib:GLOB, thread:GLOB, size>N or size<N'
bad 'size>12Q => NORETRY' 1 6 '12Q => NORET' 'a size \(bytes, or with K, M, G\)'
bad 'size>=4K => NORETRY' 1 6 '=4K => NORET' 'a size'
bad 'sym:a => NOTAFLAG' 1 10 'NOTAFLAG' 'a flag name \(KERNEL, NOFS'
bad 'sym:a => NORETRY|nofs|noio' 1 10 'NORETRY\|nofs' 'at most one base context'
bad 'sym: => NORETRY' 1 5 ' => NORETRY' 'a glob pattern'
bad 'sym:a & => NORETRY' 1 9 '=> NORETRY' 'a matcher'
bad 'thread:w => NORETRY; lib:x =>' 2 30 'the end' "flags after '=>'"
bad 'sym:a => NORETRY;; thread:w & size<1K NOFS' 2 39 'NOFS' "'&' and another matcher"
bad "sym:$(printf 'x%.0s' {1..130}) => NORETRY" 1 5 'xxxxxxxxxxxx' 'a glob of at most 127 characters'
many=$(for i in {1..33}; do printf 'sym:f%d => NORETRY; ' "$i"; done)
bad "$many" 33 $((9 * 19 + 23 * 20 + 1)) 'sym:f33 => N' 'at most 32 rules'

# GFP_STRICT=0: a warning, and the program runs.
rc=0
GFP_STRICT=0 GFP_RULES='sym:caller_a => NORETRY; lib:x => NOPE' LD_PRELOAD=$SHIM \
	"$RULES_PROG" nofill a:100 >"$TMP/lax.out" 2>"$TMP/lax.err" || rc=$?
expect_eq "GFP_STRICT=0: status" 0 "$rc"
expect_eq "GFP_STRICT=0: output" "a:100=ok" "$(cat "$TMP/lax.out")"
expect_contains "GFP_STRICT=0: warning" "$TMP/lax.err" \
	"^gfpshim: warning: GFP_RULES: rule 2, column 35 \\(at 'NOPE'\\): expected a flag name"
expect_eq "GFP_STRICT=0: lines on stderr" 1 "$(wc -l <"$TMP/lax.err")"

# Flags may be spaced around '|', as in GFP_POLICY's default=.
rc=0
GFP_RULES='sym:caller_a => NORETRY | NOWARN ; lib:x => NOFS' GFP_POLICY=confirm=1 LD_PRELOAD=$SHIM \
	"$RULES_PROG" nofill a:100 >"$TMP/spaced.out" 2>"$TMP/spaced.err" || rc=$?
expect_eq "spaced flags: status" 0 "$rc"
expect_contains "spaced flags: the rules as read" "$TMP/spaced.err" \
	"rules='sym:caller_a => NORETRY \| NOWARN ; lib:x => NOFS'"
