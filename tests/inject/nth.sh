#!/bin/bash
# fail.nth=N fails exactly the Nth eligible request of the process and no
# other, whatever the entry point (malloc, calloc, realloc, the aligned
# forms, strdup's malloc, gfp_malloc): frees and realloc(p, 0) are not
# eligible and do not count. It alone decides: probability, thread filter,
# times, space and stack filters do not stop it; min/max, being pre-filters,
# decide what it counts. Exactly one injection record, with call=N, the
# entry, size, flags and mode of that request. Requests libc makes for the
# program (fopen, asprintf, getline, strdup) are eligible, entry malloc.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"

# One request each; g is two (malloc 16, realloc), z one (realloc(p, 0) frees).
OPS='m100 c100 r100 g100 z100 a100 p100 A100 s10 k100 y100 w100 t100'
ENTRIES=(malloc calloc realloc malloc realloc malloc aligned_alloc posix_memalign memalign
	malloc gfp_malloc gfp_malloc gfp_malloc gfp_malloc)
SIZES=(100 100 100 16 100 100 100 100 100 11 100 100 100 100)
FLAGS=(KERNEL KERNEL KERNEL KERNEL KERNEL KERNEL KERNEL KERNEL KERNEL KERNEL KERNEL
	'KERNEL|NORETRY' NOWAIT ATOMIC)
MODES=(0xcc0 0xcc0 0xcc0 0xcc0 0xcc0 0xcc0 0xcc0 0xcc0 0xcc0 0xcc0 0xcc0 0x10cc0 0x800 0x820)
n=${#ENTRIES[@]}
all=$(dots "$n")

seq_expect plain '' "$all" "$OPS"
expect_records plain injection 0

for k in $(seq 1 "$n"); do
	want=$(dots $((k - 1)))X$(dots $((n - k)))
	# When g's malloc fails there is no realloc: one result fewer.
	[ "$k" = 4 ] && want=$(dots 3)X$(dots $((n - 5)))
	seq_expect "nth$k" "fail.nth=$k" "$want" "$OPS"
	expect_records "nth$k" injection 1
	i=$((k - 1))
	for f in call:$k entry:${ENTRIES[i]} size:${SIZES[i]} flags:${FLAGS[i]} mode:${MODES[i]}; do
		got=$($REC get "$TMP/nth$k.rec" injection "${f%%:*}")
		[ "$got" = "${f#*:}" ] || { inj_show "nth$k"; fail "nth=$k: injection record ${f%%:*}: expected '${f#*:}', got '$got'"; }
	done
	expect_records "nth$k" failure 0
done
note "fail.nth=1..$n each failed exactly its request: $OPS"

# Past the last eligible request: nothing fails.
seq_expect past "fail.nth=$((n + 1))" "$all" "$OPS"
expect_records past injection 0

# Repeated 200 times: the 137th malloc, and only it.
seq_expect nth137 'fail.nth=137' "$(dots 136)X$(dots 63)" '200*m100'

# min/max are pre-filters: they decide what is eligible, so what nth counts.
seq_expect minmax 'fail.nth=2;fail.min=1000' '...X.' 'm100 m2000 m100 m2000 m2000'
seq_expect minmax2 'fail.nth=2;fail.max=1000' '..X..' 'm2000 m100 m100 m2000 m100'

# Requests libc makes for the program are eligible too: fopen's FILE,
# asprintf's buffer, getline's line, strdup's copy - entry malloc, libc's
# frame first, the program's caller in the backtrace.
seq_expect libc_all 'fail.probability=1' 'XXXX' 'F0 P10 L0 s10'
expect_eq "entries of libc's requests" 'malloc malloc malloc malloc' \
	"$($REC get "$TMP/libc_all.rec" injection entry | paste -sd ' ')"
$REC get "$TMP/libc_all.rec" injection frames >"$TMP/libc_frames"
[ "$(grep -c '^libc\.so\.6 ' "$TMP/libc_frames")" = 4 ] || { cat "$TMP/libc_frames" >&2; fail "a libc request whose first frame is not libc's"; }
[ "$(grep -c ';inj_seq run_ops+0x' "$TMP/libc_frames")" = 4 ] || { cat "$TMP/libc_frames" >&2; fail "a libc request without the program's caller"; }
seq_expect libc_fopen 'fail.nth=1' 'X...' 'F0 P10 L0 s10'
seq_expect libc_asprintf 'fail.nth=2' '.X..' 'F0 P10 L0 s10'
seq_expect libc_getline 'fail.nth=1' 'X.' 'L0 F0'
note "fopen, asprintf, getline and strdup fail when their malloc is injected"

# nth is exclusive: later checks do not veto it, probability does not add to
# it (each case is checked; the failures are listed together).
bad=
for extra in 'fail.probability=1' 'fail.times=0' 'fail.space=1M' 'fail.thread=no-such-thread' \
	'fail.probability=1;fail.interval=1000' 'fail.sym=no_such_function' 'fail.lib=no-such-lib.so'; do
	inj_run excl "fail.nth=3;$extra" "$INJ/inj_seq" '10*m100'
	inj_ok excl
	got=$(sed -n 's/^main //p' "$TMP/excl.out")
	[ "$got" = '..X.......' ] && [ "$(injections excl)" = 1 ] ||
		bad="$bad
  fail.nth=3;$extra: expected ..X....... and 1 injection record, got $got and $(injections excl)"
done
[ -z "$bad" ] || fail "nth is not exclusive:$bad"
note "nth=3 alone decided against probability, times, space, interval, thread and stack filters"
