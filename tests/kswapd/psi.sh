#!/bin/bash
# kswapd.psi=1: the thread, made at the first look of the budget, arms a
# pressure trigger ("some 150000 1000000", else the 2 s window that a
# process without CAP_SYS_RESOURCE may arm) on the first file that takes
# one - the cgroup v2 memory.pressure of the process, else
# /proc/pressure/memory - and says which under confirm=1; where the kernel
# takes none it warns once and keeps to the watermark. Which file and
# trigger are taken is probed here by writing triggers the same way. And
# the keys' checks:
# kswapd=1 without a budget, kswapd.psi=1 without kswapd=1 exit 125.
source "$TESTS/lib.sh"
KS_GUEST=$BUILD/tests/kswapd/ks_guest
[ -x "$KS_GUEST" ] || fail "not built: $KS_GUEST"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY

expected=$(python3 - <<'PY'
import os
def v2_pressure():
    path = next((l.split(":", 2)[2].strip() for l in open("/proc/self/cgroup")
                 if l.startswith("0::")), None)
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        i = f.index("-")
        if f[i + 1] == "cgroup2" and path is not None:
            root = "" if f[3] == "/" else f[3]
            if path.startswith(root):
                rest = path[len(root):]
                return f[4].replace("\\040", " ") + ("" if rest == "/" else rest) + "/memory.pressure"
    return None
def arms(p, t):
    try:
        fd = os.open(p, os.O_RDWR | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        os.write(fd, t.encode() + b"\0")
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
found = [f"'{t}' on {p}" for p in (v2_pressure(), "/proc/pressure/memory") if p
         for t in ("some 150000 1000000", "some 300000 2000000") if arms(p, t)]
print(found[0] if found else "none")
PY
)
note "the kernel takes a trigger on: $expected"

status=0
env LD_PRELOAD="$SHIM" GFP_POLICY='limit=16M;kswapd=1;kswapd.psi=1;confirm=1' GFP_LOG="$TMP/psi.log" \
	"$KS_GUEST" psi >"$TMP/psi.out" 2>&1 || status=$?
[ "$status" = 0 ] || { cat "$TMP/psi.out" "$TMP/psi.log" >&2; fail "psi: status $status"; }
python3 - "$TMP/psi.log" "$TMP/psi.out" "$expected" <<'PY' || fail "psi (above)"
import json, re, sys
log = [l for l in open(sys.argv[1]).read().splitlines() if "kswapd.psi:" in l]
out = json.load(open(sys.argv[2]))
assert out["kswapd_tid"] > 0, "no thread under kswapd.psi=1"
assert len(log) == 1, log
print("#", log[0])
if sys.argv[3] == "none":
    assert re.fullmatch(r"gfpshim: warning: kswapd\.psi: the kernel offers no memory pressure "
                        r"trigger \(.+: .+; /proc/pressure/memory: .+\): kswapd wakes on the "
                        r"budget's low watermark only", log[0]), log[0]
else:
    assert log[0] == f"gfpshim: info: kswapd.psi: trigger {sys.argv[3]}", log[0]
PY

for bad in 'kswapd=1:kswapd wakes at the budget.s low watermark: it needs a budget' \
	'limit=8M;kswapd.psi=1:kswapd.psi wakes the background reclaim thread: it needs kswapd=1'; do
	status=0
	# gfp-run refuses it before running anything, in the shim's words.
	"$GFP_RUN" --policy "${bad%%:*}" -- /bin/true 2>"$TMP/bad.err" || status=$?
	expect_eq "${bad%%:*}: status" 125 "$status"
	expect_contains "${bad%%:*}: the message" "$TMP/bad.err" \
		"^gfp-run: error: --policy \(GFP_POLICY\): ${bad#*:}"
	status=0
	env GFP_POLICY="${bad%%:*}" LD_PRELOAD="$SHIM" /bin/true 2>"$TMP/bad.err" || status=$?
	expect_eq "${bad%%:*}: the shim's status" 125 "$status"
	expect_contains "${bad%%:*}: the shim's message" "$TMP/bad.err" "^gfpshim: error: GFP_POLICY: ${bad#*:}"
done
