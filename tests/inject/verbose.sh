#!/bin/bash
# fail.verbose=1 logs each injection as "gfpshim: info: FAULT_INJECTION:
# forcing a failure: size N mode:NAMES 0xHEX entry E call C site S"
# followed by its frames ("#0 FUNC+0xOFF (MODULE+0xOFF)"), with the same site
# as the record; without it the log stays silent. A record stays one line of
# at most 4096 bytes however deep the stack.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

seq_expect quiet 'fail.nth=2' '.X' 'm100 m200'
! grep -q FAULT_INJECTION "$TMP/quiet.log" || fail "an injection logged without fail.verbose"

seq_expect v 'fail.nth=2;fail.verbose=1' '.X' 'm100 m200'
site=$($REC get "$TMP/v.rec" injection site)
line="^gfpshim: info: FAULT_INJECTION: forcing a failure: size 200 mode:KERNEL 0xcc0 entry malloc call 2 site $site\$"
expect_contains "verbose line" "$TMP/v.log" "$line"
expect_eq "verbose lines" 1 "$(grep -c FAULT_INJECTION "$TMP/v.log")"
lines_after "$TMP/v.log" "$line" >"$TMP/frames"
expect_contains "frame #0 after the line" "$TMP/frames" '^ *#0 run_ops\+0x[0-9a-f]+ \(inj_seq\+0x[0-9a-f]+\)$'
expect_contains "main among the frames" "$TMP/frames" '^ *#[0-9]+ main\+0x[0-9a-f]+ \(inj_seq\+0x[0-9a-f]+\)$'

seq_expect vflags 'fail.probability=1;fail.verbose=1' 'XXX' 'w100 y300 c50'
expect_contains "NOWAIT gfp_malloc" "$TMP/vflags.log" \
	'^gfpshim: info: FAULT_INJECTION: forcing a failure: size 100 mode:NOWAIT 0x800 entry gfp_malloc call 1 site [0-9a-f]{16}$'
expect_contains "NORETRY gfp_malloc" "$TMP/vflags.log" \
	'^gfpshim: info: FAULT_INJECTION: forcing a failure: size 300 mode:KERNEL\|NORETRY 0x10cc0 entry gfp_malloc call 2 site [0-9a-f]{16}$'
expect_contains "calloc" "$TMP/vflags.log" \
	'^gfpshim: info: FAULT_INJECTION: forcing a failure: size 50 mode:KERNEL 0xcc0 entry calloc call 3 site [0-9a-f]{16}$'
note "verbose lines name size, mode, entry, call and site"

# A deep stack: 300 nested calls with a long name.
seq_expect deep 'fail.probability=1;fail.depth=64;fail.verbose=1' 'XX' 'R300 R2'
expect_records deep injection 2
sizes=$(LC_ALL=C awk '{print length($0) + 1}' "$TMP/deep.rec" | paste -sd ' ') # bytes
for s in $sizes; do [ "$s" -le 4096 ] || fail "a record of $s bytes"; done
note "records of a 300-deep stack: $sizes bytes"
[ "$($REC get "$TMP/deep.rec" injection site | sort -u | wc -l)" = 2 ] ||
	fail "a 300-deep and a 2-deep call share a site id"
