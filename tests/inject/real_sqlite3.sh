#!/bin/bash
# sqlite3 :memory: 'select 1' under fail.nth=N for N = 1..240 (its whole
# run is some 230 requests), two at a time. sqlite3 itself handles a failed
# allocation ("out of memory"), but libc code it calls may not: any run that
# dies by a fatal signal must have left an injection record and then a crash
# record for that signal, whose backtrace's top frame is in glibc or sqlite
# (libc.so.6, libsqlite3.so.0, sqlite3) - never inside libgfpshim.so. No run
# may hang, and some runs must report out of memory.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"
need_prog /usr/bin/sqlite3
export LC_ALL=C

SQL=(/usr/bin/sqlite3 :memory: 'select 1')
[ "$("${SQL[@]}")" = 1 ] || fail "sqlite3 without the shim"
list=$(seq 1 240)
nth_sweep sql "$list" "${SQL[@]}"

ok=0 oom=0 other=0 crashes='' recs=()
for n in $list; do
	rc=$(cat "$TMP/sql.$n.rc")
	[ -s "$TMP/sql.$n.rec" ] && recs+=("$TMP/sql.$n.rec")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		sweep_show sql "$n"; fail "sqlite3 fail.nth=$n: hung (timeout) or killed"
	elif [ "$rc" -ge 128 ]; then
		sig=$((rc - 128))
		case $sig in 4|6|7|8|11) ;; *) sweep_show sql "$n"; fail "sqlite3 fail.nth=$n: signal $sig" ;; esac
		ev=$($REC events "$TMP/sql.$n.rec" | paste -sd ' ')
		[ "$ev" = 'injection crash' ] || { sweep_show sql "$n"; fail "sqlite3 fail.nth=$n: signal $sig, records '$ev', expected 'injection crash'"; }
		expect_eq "sqlite3 fail.nth=$n: crash record signal" "$sig" "$($REC get "$TMP/sql.$n.rec" crash signal)"
		frames=$($REC get "$TMP/sql.$n.rec" crash frames)
		top=${frames%%;*}
		top=${top%% *}
		case $top in
		libc.so.6 | libsqlite3.so.* | sqlite3) ;;
		*) sweep_show sql "$n"; fail "sqlite3 fail.nth=$n: crash with the top frame in '$top': $frames" ;;
		esac
		crashes="$crashes
  nth=$n signal $sig: ${frames:0:200}"
	elif [ "$rc" = 0 ]; then
		ok=$((ok + 1))
	elif grep -q 'out of memory' "$TMP/sql.$n.err"; then
		oom=$((oom + 1))
	else
		other=$((other + 1))
	fi
done
[ "${#recs[@]}" -gt 0 ] && $REC check "${recs[@]}" >/dev/null || fail "sqlite3: bad or no records"
[ ! -s "$TMP/sql.240.rec" ] || fail "sqlite3: more than 240 requests, the sweep did not cover them all"
[ "$oom" -gt 0 ] || fail "sqlite3: no run reported out of memory"
note "sqlite3: ${#recs[@]} runs injected; $oom reported out of memory, $ok exited 0, $other exited non-zero otherwise"
note "crashes (glibc or sqlite frames on top):${crashes:- none}"
