#!/bin/bash
# Records and call-site ids. Every record is one JSON line of at most 4096
# bytes with the documented fields (rec.py check). A site id is the same in
# two runs of a PIE binary loaded at different addresses, and for a copy of
# the binary in another directory; the two malloc sites and the two strdup
# sites of inj_site give four ids (libc's frame is part of the site, and
# strdup's entry is libc's malloc). fail.site=ID fails the first hit of that
# site only, fail.site.hit=K its Kth hit; an unknown id fails nothing.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

/usr/bin/python3 -c 'import sys; f = open(sys.argv[1], "rb"); f.seek(16); sys.exit(0 if f.read(2) == b"\x03\x00" else 1)' \
	"$INJ/inj_site" || fail "inj_site is not a PIE (ET_DYN) binary"

# map TAG: "size site" pairs of the injection records, one per distinct pair.
map() { $REC sites "$TMP/$1.rec" | awk '{print $1, $2}' | sort -u; }

for r in 1 2; do
	inj_run "run$r" 'fail.probability=1' "$INJ/inj_site" 5
	inj_ok "run$r"
	expect_records "run$r" injection 20
done
expect_eq "every request failed" 'a XXXXX|b XXXXX|d XXXXX|e XXXXX' "$(grep -v data= "$TMP/run1.out" | paste -sd '|')"
map run1 >"$TMP/map1"
map run2 >"$TMP/map2"
expect_eq "sizes with their sites (one site per size)" '11 111 21 222' "$(awk '{print $1}' "$TMP/map1" | paste -sd ' ')"
expect_eq "distinct sites" 4 "$(awk '{print $2}' "$TMP/map1" | sort -u | wc -l)"
same_map() { cmp -s "$TMP/map1" "$1" || { diff "$TMP/map1" "$1" >&2; fail "$2"; }; }
same_map "$TMP/map2" "site ids differ between two runs"
d1=$(sed -n 's/^data=//p' "$TMP/run1.out")
d2=$(sed -n 's/^data=//p' "$TMP/run2.out")
if [ "$d1" = "$d2" ]; then
	note "ASLR is off here (both runs at $d1): the load address did not change"
else
	note "the program was loaded at $d1 and $d2; the site ids were the same"
fi
# Another directory, the same binary.
mkdir "$TMP/elsewhere"
cp "$INJ/inj_site" "$TMP/elsewhere/inj_site"
inj_run moved 'fail.probability=1' "$TMP/elsewhere/inj_site" 5
inj_ok moved
map moved >"$TMP/map3"
same_map "$TMP/map3" "site ids differ for a copy of the binary in another directory"
# With another environment (shifts the stack) and a log file: the same.
PADDING=$(head -c 3000 /dev/zero | tr '\0' x) inj_run env 'fail.probability=1;fail.verbose=1' "$INJ/inj_site" 5
inj_ok env
map env >"$TMP/map4"
same_map "$TMP/map4" "site ids depend on the environment"

site_of() { awk -v s="$1" '$1 == s {print $2}' "$TMP/map1"; }
A=$(site_of 111) B=$(site_of 222) D1=$(site_of 11) D2=$(site_of 21)
note "sites: site_a $A, site_b $B, strdup in dup_one $D1, strdup in dup_two $D2"

# The records of strdup: entry malloc, libc's strdup first, then the caller.
expect_eq "strdup record entry" malloc "$($REC get "$TMP/run1.rec" injection entry | sed -n 3p)"
fr=$($REC get "$TMP/run1.rec" injection frames | sed -n 3p)
[[ $fr =~ ^libc\.so\.6\ [_a-z]*strdup\+0x[0-9a-f]+\;inj_site\ dup_one\+0x ]] ||
	fail "frames of strdup's record: $fr"
fr=$($REC get "$TMP/run1.rec" injection frames | sed -n 1p)
[[ $fr =~ ^inj_site\ site_a\+0x[0-9a-f]+\;inj_site\ main\+0x ]] || fail "frames of site_a's record: $fr"
expect_eq "calls of the first 4 records" '1 2 3 4' "$($REC get "$TMP/run1.rec" injection call | head -4 | paste -sd ' ')"
expect_eq "seq of the records" "$(seq 1 20 | paste -sd ' ')" "$($REC get "$TMP/run1.rec" injection seq | paste -sd ' ')"
expect_eq "pid of the records" "$INJ_PID" "$($REC get "$TMP/env.rec" injection pid | sort -u)"

# fail.site and fail.site.hit.
site_expect() { # TAG POLICY EXPECTED
	inj_run "$1" "$2" "$INJ/inj_site" 5
	inj_ok "$1"
	local got
	got=$(grep -v data= "$TMP/$1.out" | paste -sd '|')
	[ "$got" = "$3" ] || { inj_show "$1"; fail "$1: policy '$2': expected '$3', got '$got'"; }
}
site_expect site_a "fail.site=$A" 'a X....|b .....|d .....|e .....'
expect_eq "fail.site: the record's site" "$A" "$($REC get "$TMP/site_a.rec" injection site)"
site_expect site_a3 "fail.site=$A;fail.site.hit=3" 'a ..X..|b .....|d .....|e .....'
site_expect site_b5 "fail.site=$B;fail.site.hit=5" 'a .....|b ....X|d .....|e .....'
site_expect site_b6 "fail.site=$B;fail.site.hit=6" 'a .....|b .....|d .....|e .....'
site_expect site_d2 "fail.site=$D2" 'a .....|b .....|d .....|e X....'
site_expect site_d1_2 "fail.site=$D1;fail.site.hit=2" 'a .....|b .....|d .X...|e .....'
site_expect site_upper "fail.site=${A^^}" 'a X....|b .....|d .....|e .....'
site_expect site_none 'fail.site=0123456789abcdef' 'a .....|b .....|d .....|e .....'
expect_records site_none injection 0
note "fail.site and fail.site.hit fail exactly the chosen hit"

# fail.site.hit=last: the shim alone cannot know it (125); gfp-run counts the
# hits in a recording run first.
inj_run last_alone "fail.site=$B;fail.site.hit=last" "$INJ/inj_site" 5
expect_eq "fail.site.hit=last without gfp-run: status" 125 "$INJ_RC"
expect_contains "fail.site.hit=last without gfp-run" "$TMP/last_alone.log" \
	"fail\.site\.hit=last needs a recording run .*gfp-run --policy"
for n in 5 3; do
	"$GFP_RUN" --policy "fail.site=$B;fail.site.hit=last" -- "$INJ/inj_site" $n \
		>"$TMP/last$n.out" 2>"$TMP/last$n.err" || fail "gfp-run, hit=last, $n: status $?"
	want="a $(printf '%*s' $n '' | tr ' ' .)|b $(printf '%*s' $((n - 1)) '' | tr ' ' .)X"
	got=$(grep -v data= "$TMP/last$n.out" | head -2 | paste -sd '|')
	expect_eq "gfp-run fail.site.hit=last, $n hits" "$want" "$got"
	expect_contains "gfp-run names the count" "$TMP/last$n.err" \
		"^gfp-run: note: fail\.site\.hit=last: site $B has $n hits in a recording run$"
done
"$GFP_RUN" --policy 'fail.site=0123456789abcdef;fail.site.hit=last' -- "$INJ/inj_site" 2 \
	>/dev/null 2>"$TMP/lastnone.err"
expect_eq "hit=last of a site never reached: status" 2 "$?"
expect_contains "hit=last of a site never reached" "$TMP/lastnone.err" \
	"never reached site 0123456789abcdef"
note "fail.site.hit=last: the last hit, counted by gfp-run's recording run"

# GFP_RECORD=fd:N
rm -f "$TMP/fd.rec"
GFP_POLICY='fail.nth=2' GFP_RECORD=fd:7 LD_PRELOAD=$SHIM "$INJ/inj_site" 1 >"$TMP/fd.out" 7>"$TMP/fd.rec" ||
	fail "GFP_RECORD=fd:7: status $?"
$REC check "$TMP/fd.rec" >/dev/null || fail "GFP_RECORD=fd:7: bad records"
expect_eq "GFP_RECORD=fd:7: the injection" "222 $B" "$($REC sites "$TMP/fd.rec" | awk '{print $1, $2}')"
# A path is appended to.
GFP_POLICY='fail.nth=1' GFP_RECORD=$TMP/fd.rec LD_PRELOAD=$SHIM "$INJ/inj_site" 1 >/dev/null || fail "append run"
expect_eq "GFP_RECORD=PATH appends" 2 "$($REC count "$TMP/fd.rec" injection)"

# One write(2) per record, of the whole line (strace, when it can trace).
if command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null; then
	mkdir -p "$TMP/trace"
	GFP_RECORD=fd:9 GFP_POLICY='fail.probability=1;fail.depth=64' \
		strace -ff -qq -e trace=write -o "$TMP/trace/t" env LD_PRELOAD="$SHIM" \
		"$INJ/inj_seq" -t 2 -M 'm100 R300 s10' '3*m100 R200' 9>"$TMP/strace.rec" >/dev/null ||
		fail "the traced run failed"
	$REC check "$TMP/strace.rec" >/dev/null || fail "records of the traced run"
	lines=$(wc -l <"$TMP/strace.rec")
	[ "$lines" = 11 ] || fail "traced run: $lines records, expected 11"
	# -ff: one trace per thread, so that no write shows up as
	# "<unfinished ...>" / "<... write resumed>" halves.
	cat "$TMP"/trace/t.* | sed -n 's/.*write(9, .*) *= \([0-9]*\)$/\1/p' >"$TMP/strace.sizes"
	LC_ALL=C awk '{print length($0) + 1}' "$TMP/strace.rec" | sort -n >"$TMP/line.sizes" # bytes
	sort -n "$TMP/strace.sizes" | cmp -s - "$TMP/line.sizes" || {
		paste "$TMP/strace.sizes" "$TMP/line.sizes" >&2
		fail "the records were not written one write(2) each"
	}
	note "$lines records from 3 threads, $lines writes of whole lines"
else
	note "strace cannot trace here: one write(2) per record not checked"
fi

# fail.site without GFP_RECORD.
got=$(GFP_POLICY="fail.site=$B;fail.site.hit=2" LD_PRELOAD=$SHIM "$INJ/inj_site" 3 | grep -v data= | paste -sd '|') ||
	fail "fail.site without GFP_RECORD: status $?"
expect_eq "fail.site=B, hit 2, without GFP_RECORD" 'a ...|b .X.|d ...|e ...' "$got"
