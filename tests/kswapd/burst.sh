#!/bin/bash
# Background reclaim on a bursty workload of our own (ks_burst: 3 threads
# allocate bursts of 64 x 8 KiB into a cache that only a shrinker empties,
# under limit=32M): without kswapd every block past the watermark is freed
# by the allocating thread in direct reclaim (allocstall counts those
# stalls); with kswapd=1 and a low-high band wide enough for a burst
# (kswapd.scale=1000: 10 % of the limit) the thread frees ahead and far
# fewer requests stall. So that this does not depend on how much CPU the
# thread gets beside the workers on a loaded machine, the workers of that
# run wait after each burst until live bytes are back under the low
# watermark (ks_burst's PACE_LIVE): each burst then starts a band away from
# the watermark, which only the thread's reclaim can have made. Asserted:
# the thread ran (woken, freed through the shrinker from a thread that is
# not a worker) and allocstall fell to less than half. The times
# (allocstall_us, max_stall_us) and the kernel's default band
# (kswapd.scale=10, unpaced) are printed, not asserted.
source "$TESTS/lib.sh"
KS_BURST=$BUILD/tests/kswapd/ks_burst
[ -x "$KS_BURST" ] || fail "not built: $KS_BURST"
unset GFP_REPORT GFP_RECORD GFP_RULES GFP_POLICY_FILE GFP_LOG GFP_POLICY

run() { # TAG POLICY [PACE_LIVE]
	local status=0
	LD_PRELOAD="$SHIM" GFP_POLICY="$2" GFP_REPORT="$TMP/$1.json" GFP_LOG="$TMP/$1.log" \
		bounded 100 "$KS_BURST" 3 300 64 8192 1000 0 "${3:-0}" >"$TMP/$1.out" 2>&1 || status=$?
	[ "$status" = 0 ] || { cat "$TMP/$1.out" "$TMP/$1.log" >&2; fail "$1: status $status"; }
	python3 - "$TMP/$1.json" "$TMP/$1.out" "$1" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["vmstat"]
out = json.load(open(sys.argv[2]))
print(f"# {sys.argv[3]}: allocstall {v['allocstall']} allocstall_us {v['allocstall_us']} "
      f"max_stall_us {v['max_stall_us']} kswapd_wake {v['kswapd_wake']} "
      f"kswapd_rounds {v['kswapd_rounds']} freed by workers {out['freed_by_workers'] >> 20} MiB, "
      f"elsewhere {out['freed_elsewhere'] >> 20} MiB; paced bursts {out['paced']}, "
      f"of which kswapd had gone to sleep above the watermark {out['pace_late']}")
PY
}
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]] if sys.argv[2] else json.load(open(sys.argv[1]))[sys.argv[3]])' "$@"; }

run off 'limit=32M'
# The low watermark (README: min_free 1 % of the limit, D = limit x
# kswapd.scale / 10000): kswapd wakes above it.
limit=$((32 << 20))
low=$((limit - limit / 100 - limit / 10000 * 1000))
run on 'limit=32M;kswapd=1;kswapd.scale=1000' "$low"
run default 'limit=32M;kswapd=1'

expect_eq "off: kswapd woken" 0 "$(field "$TMP/off.json" vmstat kswapd_wake)"
expect_eq "off: freed outside the workers" 0 "$(field "$TMP/off.out" '' freed_elsewhere)"
off=$(field "$TMP/off.json" vmstat allocstall)
[ "$off" -gt 1000 ] || fail "off: only $off stalls: the workload does not reach the watermark"
[ "$(field "$TMP/on.json" vmstat kswapd_wake)" -ge 1 ] || fail "on: kswapd never woken"
[ "$(field "$TMP/on.out" '' freed_elsewhere)" -gt $((8 << 20)) ] || fail "on: kswapd freed little through the shrinker"
on=$(field "$TMP/on.json" vmstat allocstall)
[ $((on * 2)) -lt "$off" ] || fail "kswapd=1;kswapd.scale=1000: $on direct-reclaim stalls, without it $off: expected less than half"
