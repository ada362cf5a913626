#!/bin/bash
# Real programs that handle allocation failure, under fail.nth=N for
# N = 1..200, two at a time: xz compressing four small files (LC_ALL=C, so
# the whole run is some 30 requests and every one of them is failed once)
# and lua5.4 running a script (N = 1..200, then every 10th request up to the
# end of its ~850). No run may die by a signal or hang: each either exits 0
# with exactly the output of a run without injection (the failure was
# absorbed, e.g. by setlocale) or exits non-zero saying it ran out of memory.
# Both must report out of memory at least once.
source "$TESTS/lib.sh"
source "$TESTS/inject/inj.sh"
need_prog /usr/bin/xz /usr/bin/lua5.4
export LC_ALL=C

# classify TAG N WANT_OUT MEMORY_RE: prints ok|oom, fails otherwise.
classify() {
	local rc
	rc=$(cat "$TMP/$1.$2.rc")
	if [ "$rc" = 0 ]; then
		cmp -s "$TMP/$1.$2.out" "$3" || { sweep_show "$1" "$2"; fail "$1 fail.nth=$2: exit 0 with other output (silent data loss)"; }
		echo ok
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		sweep_show "$1" "$2"; fail "$1 fail.nth=$2: hung (timeout)"
	elif [ "$rc" -ge 128 ]; then
		sweep_show "$1" "$2"; fail "$1 fail.nth=$2: killed by signal $((rc - 128))"
	elif grep -Eq -- "$4" "$TMP/$1.$2.err"; then
		echo oom
	else
		sweep_show "$1" "$2"; fail "$1 fail.nth=$2: exit $rc without an out-of-memory message"
	fi
}

# summary TAG LIST WANT_OUT MEMORY_RE
summary() {
	local n ok=0 oom=0 inj=0 last=0 recs=()
	for n in $2; do
		case $(classify "$1" "$n" "$3" "$4") in
		ok) ok=$((ok + 1)) ;;
		oom) oom=$((oom + 1)) ;;
		*) exit 1 ;;
		esac
		if [ -s "$TMP/$1.$n.rec" ]; then
			inj=$((inj + 1)) last=$n
			recs+=("$TMP/$1.$n.rec")
		fi
	done
	$REC check "${recs[@]}" >/dev/null || fail "$1: bad records"
	expect_eq "$1: injection records, one per run that had an injection" "$inj" \
		"$(cat "${recs[@]}" | grep -c '"event":"injection"')"
	[ "$oom" -gt 0 ] || fail "$1: no run reported out of memory"
	note "$1: $oom runs reported out of memory, $ok completed; injected in $inj runs (last at nth=$last)"
}

# xz: four files to stdout.
for i in 1 2 3 4; do seq $((i * 1000)) $((i * 1000 + 2500)) >"$TMP/f$i.txt"; done
XZ=(/usr/bin/xz -1 -c "$TMP/f1.txt" "$TMP/f2.txt" "$TMP/f3.txt" "$TMP/f4.txt")
"${XZ[@]}" >"$TMP/xz.want" || fail "xz without the shim failed"
LD_PRELOAD=$SHIM "${XZ[@]}" >"$TMP/xz.idle" || fail "xz under the idle shim failed"
cmp -s "$TMP/xz.want" "$TMP/xz.idle" || fail "xz: output differs under the idle shim"
list=$(seq 1 200)
nth_sweep xz "$list" "${XZ[@]}"
summary xz "$list" "$TMP/xz.want" 'xz: .*(Cannot allocate memory|Memory allocation failed)'
grep -l '"module":"liblzma' "$TMP"/xz.*.rec >/dev/null || fail "xz: no injection reached liblzma"
[ ! -s "$TMP/xz.200.rec" ] || fail "xz: more than 200 requests, the sweep did not cover them all"

# lua5.4: tables, strings, patterns.
cat >"$TMP/script.lua" <<'LUA'
local t = {}
for i = 1, 200 do t[i] = string.format("item %d %s", i, string.rep("x", i % 17)) end
local s = table.concat(t, ",")
local m = {}
for w in s:gmatch("item (%d+)") do m[#m + 1] = tonumber(w) end
local sum = 0
for _, v in ipairs(m) do sum = sum + v end
local keys = {}
for i = 1, 100 do keys["k" .. i] = { i, tostring(i * i) } end
local n = 0
for k, v in pairs(keys) do n = n + #k + #v[2] end
print(#s, #m, sum, n)
LUA
LUA=(/usr/bin/lua5.4 "$TMP/script.lua")
"${LUA[@]}" >"$TMP/lua.want" || fail "lua without the shim failed"
list="$(seq 1 200) $(seq 210 10 1400)"
nth_sweep lua "$list" "${LUA[@]}"
summary lua "$list" "$TMP/lua.want" 'lua5\.4: .*not enough memory'
[ ! -s "$TMP/lua.1400.rec" ] || fail "lua: the sweep did not reach the end of the script (more than 1400 requests)"
