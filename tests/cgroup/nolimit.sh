#!/bin/bash
# limit=cgroup where the cgroup does not limit the process: a limit set on
# an ancestor is followed (a cgroup without a limit inside a 64 MiB one gets
# NULL, not the kernel's OOM kill); no limit up to the hierarchy's root is a
# warning naming the cgroup, and the process runs without a budget (limit=0
# in its report); no memory hierarchy to follow (the v1 memory mount hidden
# in a mount namespace of the test's: what is left is this host's cgroup v2
# without the memory controller) is a warning too. Never exit 125: the
# same policy serves hosts with and without a limit.
source "$TESTS/lib.sh"
source "$TESTS/cgroup/cg.sh"

# A limit above: the process's own cgroup has none.
cg_make above $((64 * MiB))
kills=$(cg_kills)
cg_child inner
status=0
cg_run env LD_PRELOAD="$SHIM" GFP_POLICY='limit=cgroup;oom=fail;warn.burst=0' GFP_LOG="$TMP/inner.log" \
	"$CG_ALLOC" fill 65536 >"$TMP/inner.out" 2>&1 || status=$?
CG=${CG%/inner}
cg_survived inner "$status" "$kills"
total=$(json_get "$TMP/inner.out" 'd["total"]')
note "in a cgroup without a limit inside a 64 MiB one: $((total / MiB)) MiB before NULL"
mib_between "inner: before NULL" "$total" 40 63

# No limit anywhere.
cg_make free
status=0
cg_run env LD_PRELOAD="$SHIM" GFP_POLICY='limit=cgroup;stats=totals' GFP_LOG="$TMP/free.log" \
	GFP_REPORT="$TMP/free.json" "$CG_ALLOC" take $((16 * MiB)) >"$TMP/free.out" 2>&1 || status=$?
expect_eq "no limit: status" 0 "$status"
expect_eq "no limit: what the program took" $((16 * MiB)) "$(json_get "$TMP/free.out" 'd["total"]')"
expect_eq "no limit: the report's limit" 0 "$(json_get "$TMP/free.json" 'd["policy"]["limit"]')"
expect_eq "no limit: no budget, no vmstat" False "$(json_get "$TMP/free.json" '"vmstat" in d')"
python3 - "$TMP/free.log" "$CG" "$CG_V" <<'PY' || fail "no limit: the warning (above)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
m = re.fullmatch(r"gfpshim: warning: limit=cgroup: the memory cgroup (\S+) has no limit "
                 r"\((.+) up to the hierarchy's root\): no budget \(set the cgroup's limit, "
                 r"or set limit=SIZE\)", lines[0])
assert m, lines[0]
assert m.group(1) == sys.argv[2], (m.group(1), sys.argv[2])
want = "memory.limit_in_bytes is unlimited" if sys.argv[3] == "1" else "memory.max and memory.high are 'max'"
assert m.group(2) == want, m.group(2)
print("# " + lines[0])
PY

# No memory hierarchy: the v1 memory mount hidden.
if [ "$CG_V" != 1 ]; then
	note "cgroup v2 here: the v1 half does not apply"
	exit 0
fi
mnt=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup" && ("," $(i + 3) ",") ~ /,memory,/) { print $5; exit } }' /proc/self/mountinfo)
if ! unshare -m true 2>/dev/null; then
	note "unshare -m is not allowed here: the no-controller half is not run"
	exit 0
fi
status=0
unshare -m sh -c 'umount -l "$0" && exec "$@"' "$mnt" env LD_PRELOAD="$SHIM" \
	GFP_POLICY='limit=cgroup' GFP_LOG="$TMP/none.log" "$CG_ALLOC" take $MiB >"$TMP/none.out" 2>&1 || status=$?
expect_eq "no memory hierarchy: status" 0 "$status"
python3 - "$TMP/none.log" <<'PY' || fail "no memory hierarchy: the warning (above)"
import sys
lines = open(sys.argv[1]).read().splitlines()
assert lines == ["gfpshim: warning: limit=cgroup: no memory cgroup to follow (the process's "
                 "cgroup v2 has no memory controller, and no cgroup v1 memory hierarchy is "
                 "mounted for it): no budget (run the process in a memory cgroup with a limit, "
                 "or set limit=SIZE)"], lines
print("# " + lines[0])
PY
