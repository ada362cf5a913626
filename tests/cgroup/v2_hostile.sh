#!/bin/bash
# limit=cgroup against hostile cgroup v2 files (a directory of v2-format
# files: see v2.sh): garbage, control bytes, a negative and a huge number,
# "max", a missing file, a FIFO nobody writes, a symbolic link to
# /dev/zero, a directory where a file should be; and a cgroup whose name
# has spaces, a newline and UTF-8 in a UTF-8 locale. The process always
# runs (never exit 125, never a hang: every run is killed after 60 s): a
# figure that is not one is no limit, and no limit anywhere is one warning
# and no budget; a bad memory.high beside a good memory.max is no throttle;
# memory.high alone (memory.max "max") throttles without a hard limit.
source "$TESTS/lib.sh"
source "$TESTS/cgroup/v2.sh"

NOLIMIT="memory.max and memory.high are 'max' up to the hierarchy's root): no budget"

# nolimit TAG: the run went on without a budget, saying so once.
nolimit() {
	[ "$STATUS" = 0 ] || { show "$1"; fail "$1: status $STATUS"; }
	check "$1" "o['total'] == $((8 * MiB)) and r['policy']['limit'] == '0'" "no budget, the program runs"
	check "$1" "log.count('warning') == 1 and \"$NOLIMIT\" in log" "one warning: no limit"
}

i=0
for max in garbage $'\x01\x02\x7f' -5 99999999999999999999999999 max ''; do
	i=$((i + 1))
	v2_dir bad$i "$max" max
	v2_run bad$i 'limit=cgroup' "$MEMCG_PROG" fill KERNEL 65536 $((8 * MiB))
	nolimit bad$i
done

v2_dir fifo max max
rm "$CG/memory.max" && mkfifo "$CG/memory.max"
v2_run fifo 'limit=cgroup' "$MEMCG_PROG" fill KERNEL 65536 $((8 * MiB))
nolimit fifo

v2_dir zero max max
ln -sf /dev/zero "$CG/memory.max"
v2_run zero 'limit=cgroup' "$MEMCG_PROG" fill KERNEL 65536 $((8 * MiB))
nolimit zero

v2_dir dir max max
rm "$CG/memory.max" && mkdir "$CG/memory.max"
v2_run dir 'limit=cgroup' "$MEMCG_PROG" fill KERNEL 65536 $((8 * MiB))
nolimit dir

# No memory.current: no memory cgroup at all.
v2_dir nocurrent $((16 * MiB)) max
rm "$CG/memory.current"
v2_run nocurrent 'limit=cgroup' "$MEMCG_PROG" fill KERNEL 65536 $((8 * MiB))
[ "$STATUS" = 0 ] || { show nocurrent; fail "nocurrent: status $STATUS"; }
check nocurrent "r['policy']['limit'] == '0' and 'GFP_TEST_CGROUP names no directory with a memory.current' in log" "no cgroup"

# A good memory.max beside a bad or missing memory.high: memory.max alone.
for high in garbage missing; do
	v2_dir high_$high $((16 * MiB)) "$high"
	[ "$high" = missing ] && rm "$CG/memory.high"
	v2_run high_$high 'limit=cgroup' "$MEMCG_PROG" fill 'KERNEL|RETRY_MAYFAIL' 65536 $((32 * MiB))
	[ "$STATUS" = 0 ] || { show high_$high; fail "high_$high: status $STATUS"; }
	check high_$high "o['nulls'] == 1 and o['total'] <= $((16 * MiB))" "memory.max holds"
	check high_$high "r['memory_high']['sleeps'] == 0 and r['memory_events']['high'] == 0" "no throttle"
done

# memory.high alone: a throttle, no hard limit; garbage in memory.oom.group
# and memory.events does not matter.
v2_dir highonly max $((8 * MiB))
echo $'1\x00junk' >"$CG/memory.oom.group"
printf 'garbage\n' >"$CG/memory.events"
v2_run highonly 'limit=cgroup' "$MEMCG_PROG" fill KERNEL 65536 $((8 * MiB + 256 * 1024)) 2
[ "$STATUS" = 0 ] || { show highonly; fail "highonly: status $STATUS"; }
check highonly "o['nulls'] == 0 and o['total'] == $((8 * MiB + 256 * 1024))" "past memory.high, never NULL"
check highonly "r['memory_events']['high'] >= 1 and r['policy']['limit'] == 'cgroup'" "throttled"

# A name with spaces, a newline and UTF-8, in a UTF-8 locale: quoted in
# the one line that names it.
need_c_utf8
CG=$TMP/$'caf\303\251 \n dir'
mkdir "$CG"
echo $((16 * MiB)) >"$CG/memory.max"
echo 0 >"$CG/memory.current"
LC_ALL=C.UTF-8 v2_run utf8 'limit=cgroup;confirm=1' "$MEMCG_PROG" fill KERNEL 65536 $((8 * MiB))
[ "$STATUS" = 0 ] || { show utf8; fail "utf8: status $STATUS"; }
check utf8 "r['policy']['limit'] == 'cgroup' and o['total'] == $((8 * MiB))" "the budget follows it"
python3 - "$TMP/utf8.log" <<'PY' || fail "utf8: the confirm line (above)"
import sys
lines = [l for l in open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n") if "limit=cgroup: cgroup v2" in l]
assert len(lines) == 1, lines
assert "café \\x0a dir:" in lines[0], lines[0]
print("# " + lines[0])
PY
