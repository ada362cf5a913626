#!/bin/bash
# The first matching rule wins: caller_a matches both 'sym:caller_a' and
# 'sym:xmalloc', so the order of the two decides its flags. A rule's flags
# replace default=; explicit flags (gfp_malloc(n, GFP_KERNEL)) win over a
# matching rule, and a thread's NOFS scope still restricts a rule's flags.
# Rules written a line each keep their order.
source "$TESTS/lib.sh"
source "$TESTS/rules/rules.sh"

K='KERNEL oom' N='KERNEL|NORETRY noretry' M='KERNEL|RETRY_MAYFAIL mayfail'
rp_run ab "sym:caller_a => NORETRY; sym:xmalloc => RETRY_MAYFAIL" "$PRESSURE" fill a:4096 b:4096
rp_expect "caller_a's rule first" ab "a 4096 $N;b 4096 $M"
rp_run ba "sym:xmalloc => RETRY_MAYFAIL; sym:caller_a => NORETRY" "$PRESSURE" fill a:4096 b:4096
rp_expect "xmalloc's rule first" ba "a 4096 $M;b 4096 $M"
# RETRY_MAYFAIL never reaches the OOM step: only the KERNEL fills do.
[ "$($RECSUM who "$TMP/ba.rec" oom | grep -vc '^fill ')" = 0 ] ||
	{ rp_show ba; fail "an OOM record for a RETRY_MAYFAIL request"; }

# A rule a line, as in a file of rules (CRLF too, blank lines and ';' mixed in).
rp_run lines "$(printf '\nsym:caller_a => NORETRY\r\n\n  sym:xmalloc\r\n  => RETRY_MAYFAIL ;\n')" \
	"$PRESSURE" fill a:4096 b:4096
rp_expect "rules a line each, caller_a's first" lines "a 4096 $N;b 4096 $M"
rp_run lines2 "$(printf 'sym:xmalloc => RETRY_MAYFAIL\nsym:caller_a => NORETRY')" "$PRESSURE" \
	fill a:4096 b:4096
rp_expect "rules a line each, xmalloc's first" lines2 "a 4096 $M;b 4096 $M"

rp_run def "sym:caller_a => KERNEL" "$PRESSURE;default=KERNEL|NORETRY" fill a:4096 b:4096
rp_expect "the rule replaces default=" def "a 4096 $K;b 4096 $N"

rp_run exp "sym:caller_a* => NORETRY" "$PRESSURE" fill ga:4096 a:4096 ga:100
rp_expect "explicit GFP_KERNEL wins" exp "ga 4096 $K;a 4096 $N;ga 100 $K"

rp_run scope "sym:caller_a => NORETRY" "$PRESSURE;nofs_fail=1" fill na:4096 b:4096
rp_expect "a NOFS scope restricts the rule's flags" scope "a 4096 NOFS|NORETRY noretry;b 4096 $K"
