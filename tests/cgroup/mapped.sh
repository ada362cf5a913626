#!/bin/bash
# limit=cgroup in a real 64 MiB memory cgroup, for memory a program maps
# itself: a pool that maps and writes 1 MiB at a time is OOM-killed by the
# kernel without the shim; under limit=cgroup;oom=fail its mmap fails with
# ENOMEM short of the cgroup's limit and the kernel kills nothing. The same
# for python3 filling the cgroup with small objects in pymalloc's arenas:
# a MemoryError instead of the kernel's kill.
source "$TESTS/lib.sh"
source "$TESTS/cgroup/cg.sh"
need_prog /usr/bin/python3
MAPPROG=$BUILD/tests/preload/map_prog

cg_make mapped $((64 * MiB))
note "cgroup v$CG_V $CG, limit 64 MiB"

kills=$(cg_kills)
status=0
cg_run "$MAPPROG" fill $MiB $((256 * MiB)) >"$TMP/plain.out" 2>&1 || status=$?
expect_eq "without the shim the kernel kills the pool (SIGKILL: status 137)" 137 "$status"
expect_eq "the kernel's OOM kills in the cgroup" $((kills + 1)) "$(cg_kills)"
kills=$(cg_kills)

status=0
cg_run env LD_PRELOAD="$SHIM" GFP_POLICY='limit=cgroup;oom=fail' GFP_LOG="$TMP/pool.log" \
	"$MAPPROG" fill $MiB $((256 * MiB)) >"$TMP/pool.out" 2>&1 || status=$?
cg_survived pool "$status" "$kills"
expect_eq "the pool's mmap failed with ENOMEM" 12 "$(json_get "$TMP/pool.out" 'd["errno"]')"
total=$(json_get "$TMP/pool.out" 'd["total"]')
note "the pool: $((total / MiB)) MiB before ENOMEM"
mib_between "the pool before ENOMEM (most of the 64 MiB, not all)" "$total" 40 63
expect_contains "the failure report names the cgroup" "$TMP/pool.log" "Mem-Info: cgroup v$CG_V "

# (The spare megabytes, given back first, let the handler itself run.)
cat >"$TMP/fill.py" <<'PY'
spare = bytearray(4 << 20)
held = []
try:
    while True:
        held.append((len(held), len(held) + 1))
except MemoryError:
    spare = None
    n = len(held)
    held = None
    print("MemoryError", n)
PY
status=0
cg_run env LD_PRELOAD="$SHIM" GFP_POLICY='limit=cgroup;oom=fail' GFP_LOG="$TMP/py.log" \
	/usr/bin/python3 "$TMP/fill.py" >"$TMP/py.out" 2>"$TMP/py.err" || status=$?
cg_survived py "$status" "$kills"
expect_contains "python3's MemoryError" "$TMP/py.out" '^MemoryError [0-9]+$'
note "python3: $(cat "$TMP/py.out") objects"
