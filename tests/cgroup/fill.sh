#!/bin/bash
# limit=cgroup in a real 64 MiB memory cgroup: a program that allocates (and
# writes) until malloc returns NULL is OOM-killed by the kernel without the
# shim; under limit=cgroup;oom=fail it gets NULL instead - for large blocks
# (one round, then the costly failure) and for small ones (too small to
# fail: they loop until the OOM step, which fails them) - and the kernel
# kills nothing. The failure report's Mem-Info names the cgroup and its
# figures, and the report keeps limit=cgroup.
source "$TESTS/lib.sh"
source "$TESTS/cgroup/cg.sh"

cg_make fill $((64 * MiB))
note "cgroup v$CG_V $CG, limit 64 MiB"

kills=$(cg_kills)
status=0
cg_run "$CG_ALLOC" fill 65536 >"$TMP/plain.out" 2>&1 || status=$?
expect_eq "without the shim the kernel kills the program (SIGKILL: status 137)" 137 "$status"
expect_eq "the kernel's OOM kills in the cgroup" $((kills + 1)) "$(cg_kills)"
kills=$(cg_kills)

for chunk in 65536 4096; do
	status=0
	cg_run env LD_PRELOAD="$SHIM" GFP_POLICY='limit=cgroup;oom=fail' GFP_LOG="$TMP/$chunk.log" \
		GFP_REPORT="$TMP/$chunk.json" "$CG_ALLOC" fill $chunk >"$TMP/$chunk.out" 2>&1 || status=$?
	cg_survived "$chunk" "$status" "$kills"
	total=$(json_get "$TMP/$chunk.out" 'd["total"]')
	note "chunk $chunk: $((total / MiB)) MiB before NULL"
	mib_between "chunk $chunk: before NULL (most of the 64 MiB, not all)" "$total" 40 63
	expect_eq "chunk $chunk: the report's limit" cgroup "$(json_get "$TMP/$chunk.json" 'd["policy"]["limit"]')"
	# The failure report: Mem-Info's cgroup line, as key:value fields.
	python3 - "$TMP/$chunk.log" "$CG" "$CG_V" "$total" <<'PY' || fail "chunk $chunk: the failure report (above)"
import re, sys
log, cg, v, total = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], int(sys.argv[4])
fails = [l for l in log.splitlines() if "allocation failure" in l]
assert len(fails) == 1, f"one allocation failure report, got {len(fails)}:\n{log}"
lines = [l for l in log.splitlines() if "Mem-Info: cgroup " in l]
assert len(lines) == 1, f"one Mem-Info cgroup line, got {lines}\n{log}"
m = re.search(r"Mem-Info: cgroup v(\d) (\S+) (.*)$", lines[0])
assert m and m.group(1) == v and m.group(2) == cg, lines[0]
fields = dict(re.findall(r"(\w+):(\S+(?: [KMG]iB| B)?)", m.group(3)))
assert fields["limit"] == "64.0 MiB", fields
unit = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
size = lambda s: float(s.split()[0]) * unit[s.split()[1]]
assert 0 < size(fields["usage"]) <= 64 << 20, fields
own = size(fields["own"])
assert abs(own - total) < 2 << 20, f"own {own} vs the {total} bytes the program holds"
print(f"# {lines[0].split('Mem-Info: ')[1]}")
PY
done
