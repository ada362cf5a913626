#!/bin/bash
# gfp-run --rules STR sets GFP_RULES for the program (doc/gfp-run.md): the rule
# applies and the GFP_REPORT JSON names it in its "rules" field (empty
# without rules); a bad rule stops gfp-run with status 125 and the
# engine's message before the program runs.
source "$TESTS/lib.sh"
source "$TESTS/rules/rules.sh"
[ -x "$GFP_RUN" ] || fail "not built: $GFP_RUN"

rules='sym:caller_a => NORETRY'
RP_RC=0 # as rp_run leaves it, for rp_expect
GFP_RECORD=$TMP/run.rec "$GFP_RUN" --rules "$rules" --policy "$PRESSURE" --log "$TMP/run.log" \
	--report "$TMP/run.json" -- "$RULES_PROG" fill a:4096 b:4096 >"$TMP/run.out" 2>"$TMP/run.err" ||
	RP_RC=$?
rp_expect "gfp-run --rules" run "a 4096 KERNEL|NORETRY noretry;b 4096 KERNEL oom"
expect_eq "report rules field" "$rules" \
	"$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rules"])' "$TMP/run.json")"

rc=0
"$GFP_RUN" --policy 'stats=totals' --report "$TMP/none.json" -- "$RULES_PROG" nofill a:100 \
	>"$TMP/none.out" 2>&1 || rc=$?
expect_eq "gfp-run without --rules: status" 0 "$rc"
expect_eq "report rules field without rules" "''" \
	"$(/usr/bin/python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["rules"]))' "$TMP/none.json")"

rc=0
"$GFP_RUN" --rules 'sym:caller_a => NORETRY; size>1X => NOFS' -- "$RULES_PROG" nofill a:100 \
	>"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
expect_eq "gfp-run --rules BAD: status" 125 "$rc"
[ ! -s "$TMP/bad.out" ] || fail "gfp-run --rules BAD ran the program: $(cat "$TMP/bad.out")"
expect_contains "gfp-run --rules BAD: message" "$TMP/bad.err" \
	"GFP_RULES: rule 2, column 31 \\(at '1X => NOFS'\\): expected a size"
expect_eq "gfp-run --rules BAD: lines on stderr" 1 "$(wc -l <"$TMP/bad.err")"
