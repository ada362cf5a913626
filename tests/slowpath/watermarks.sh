#!/bin/bash
# Under limit=, ordinary requests fill up to limit - min_free; NOWAIT gets
# none of the reserve, NOMEMALLOC cancels MEMALLOC, HIGH may use half of it,
# ATOMIC 5/8 (but with NOMEMALLOC half, like HIGH), MEMALLOC all of it (then
# nothing more). min_free=0 means 1% of
# the limit, at least 64K. sp_watermark prints the blocks of 4096 bytes each
# kind added, in that order.
source "$TESTS/lib.sh"
source "$TESTS/slowpath/sp.sh"

check() { # check POLICY RESERVE_BYTES LIMIT_BYTES
	local out
	out=$(GFP_POLICY=$1 LD_PRELOAD=$SHIM "$BUILD/tests/slowpath/sp_watermark") ||
		fail "$1: sp_watermark failed: $out"
	note "$1: $out"
	/usr/bin/python3 - "$out" "$2" "$3" <<'PY' || fail "$1: reserve fractions wrong (above)"
import sys
got = dict(kv.split("=") for kv in sys.argv[1].split())
got = {k: int(v) for k, v in got.items()}
R, L = int(sys.argv[2]), int(sys.argv[3])
bad = []
# The ordinary fill ends within the program's own few hundred KB of L - R.
if not (L - R - 512 * 1024) / 4096 <= got["kernel"] <= (L - R) / 4096:
    bad.append(f"kernel={got['kernel']}, expected just below {(L - R) / 4096:.1f}")
for k in ("nowait", "nomemalloc", "atomic_nomem", "after"):
    if got[k] != 0:
        bad.append(f"{k}={got[k]}, expected 0")
cum = 0
for k, frac in (("high", 1 / 2), ("atomic", 5 / 8), ("memalloc", 1)):
    cum += got[k]
    want = R * frac / 4096
    if abs(cum - want) >= 2:
        bad.append(f"up to {k}: {cum} blocks, expected {want:.1f} (reserve x {frac})")
for b in bad:
    print("mismatch:", b)
sys.exit(1 if bad else 0)
PY
}

check 'limit=8M;min_free=1M' $((1 << 20)) $((8 << 20))
check 'limit=8M' 83886 $((8 << 20))
check 'limit=2M' 65536 $((2 << 20))
