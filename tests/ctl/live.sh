#!/bin/bash
# gfp-ctl report under stats=sites gives each site's live bytes and calls as
# they stand, while threads allocate: the map walk a report makes counts
# the blocks whose map entries give their size (24 bytes: 32 usable, and the
# 8-byte class), the site's own counters the blocks over 128 KiB. ctl_prog's
# hold keeps blocks from one call site; the spinner thread allocates and
# frees 64 bytes all the while, and the two idle workers hold nothing. The
# hold site's row must be exact after each step, and 0 live after release.
source "$TESTS/lib.sh"
source "$TESTS/ctl/ctl.sh"

ctl_start live 'ctl=1;stats=sites' server -w 2 -s
ctl_read ready

# report_row NAME CALLS BYTES LIVE_CALLS LIVE_BYTES: the report now has
# exactly one row of the hold site (the first report finds it by its calls
# and bytes, the later ones by its module and offset) with these numbers.
report_row() {
	gctl_expect 0 "$CTL_PID" report
	cp "$TMP/gctl.out" "$TMP/$1.json"
	/usr/bin/python3 - "$TMP/$1.json" "$TMP/site" "$@" <<'PY' || fail "report $1 (above)"
import json, os, sys
rep, site_file, name = sys.argv[1], sys.argv[2], sys.argv[3]
want = tuple(int(x) for x in sys.argv[4:8])
rows = json.load(open(rep))["allocinfo"]
if os.path.exists(site_file):
    module, offset = open(site_file).read().split()
    got = [r for r in rows if r["module"] == module and r["offset"] == offset]
else:
    got = [r for r in rows if (r["calls"], r["bytes"]) == want[:2]]
if len(got) != 1:
    sys.exit(f"FAIL: {name}: {len(got)} rows of the hold site, expected 1: {got}")
r = got[0]
open(site_file, "w").write(f"{r['module']} {r['offset']}")
have = (r["calls"], r["bytes"], r["live_calls"], r["live_bytes"])
if have != want:
    sys.exit(f"FAIL: {name}: (calls, bytes, live_calls, live_bytes) {have}, expected {want}; {r}")
print(f"# {name}: {have}")
PY
}

ctl_cmd 'hold 1000 24'
expect_eq "usable size of malloc(24)" 32 "$(ctl_field usable)"
ctl_cmd 'spin 2000'
report_row small 1000 24000 1000 32000

ctl_cmd 'hold 3 300000'
big=$(ctl_field usable)
[ "$big" -ge 300000 ] || fail "usable size of malloc(300000): '$big'"
ctl_cmd 'hold 200 8'
expect_eq "usable size of malloc(8)" 8 "$(ctl_field usable)"
ctl_cmd 'spin 2000'
report_row mixed 1203 $((24000 + 900000 + 1600)) 1203 $((32000 + 3 * big + 1600))

ctl_cmd release
expect_eq "blocks released" 1203 "${CTL_LINE#released }"
ctl_cmd 'spin 2000'
report_row released 1203 $((24000 + 900000 + 1600)) 0 0

# Held again from the same site: the walk sees the new blocks, not the old.
ctl_cmd 'hold 50 100'
report_row again 1253 $((24000 + 900000 + 1600 + 5000)) 50 $((50 * 112))
ctl_end
