#!/bin/bash
# An unmodified program's malloc gets the process default (default=) when it
# meets a real ENOMEM (RLIMIT_AS): a NOFAIL default loops until another
# thread frees, a NORETRY one fails after one round with the failure report.
# Arming fail.probability beside it changes neither (threads armed by
# fail.probability alone stay idle, and a real failure is then jemalloc's
# answer: that is the control, and so is no policy at all).
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"

ARGS=(--plain --flags KERNEL --size 65536 --source enomem --free-on-canary 1)
RARE='fail.probability=0.000000001'

sp_run idle '' "${ARGS[@]}"
sp_expect_result idle 0 null 0
sp_run armed "$RARE" "${ARGS[@]}"
sp_expect_result armed 0 null 0
note "no policy, or fail.probability alone: jemalloc's NULL"

# default, and what its request does: returns ok after the free, or fails
# (null) at once with the failure report.
for want in NOFAIL:ok:1 NORETRY:null:0; do
	IFS=: read -r ctx result freed <<<"$want"
	for armed in 0 1; do
		pol=default=$ctx
		[ $armed = 1 ] && pol="$pol;$RARE"
		sp_run "$ctx$armed" "$pol" "${ARGS[@]}"
		sp_expect_result "$ctx$armed" 0 "$result" "$freed"
		[ "$result" = ok ] || expect_contains "$pol: the failure report names the default" \
			"$TMP/$ctx$armed.log" "mode:KERNEL\\|$ctx"
	done
done
note "default=NOFAIL loops until the free, default=NORETRY fails with the report, armed or not"

# A failure in the fill that the next call undoes (jemalloc does this now and
# then under RLIMIT_AS; fail.nth makes one here): the fill goes on past it,
# and the request after it still meets the end of the address space.
sp_run transient 'default=NORETRY;fail.nth=50' "${ARGS[@]}"
sp_expect_result transient 0 null 0
expect_eq "failures the fill went past" 1 "$(sp_field transient transient)"
note "a fill failure that the next call undoes does not end the fill"
