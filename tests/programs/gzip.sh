#!/bin/bash
# gzip compressing a generated ~5 MB file writes the same compressed bytes
# under the idle shim, and decompressing gives back the original, again with
# identical stdout, stderr and status.
source "$TESTS/lib.sh"
source "$TESTS/programs/idle.sh"
need_prog /usr/bin/gzip

# Text that compresses somewhat, not trivially: words picked by an LCG.
/usr/bin/python3 - "$TMP/data" <<'PY' || fail "cannot generate the input file"
import sys
words = [w.encode() for w in ("alloc free page zone slab order gfp kswapd reclaim "
         "compact oom watermark highmem dma32 movable nofail noretry").split()]
x, out = 12345, bytearray()
while len(out) < 5 * 1024 * 1024:
    x = (x * 1103515245 + 12345) & 0x7fffffff
    out += words[x % len(words)]
    out += b"\n" if x % 9 == 0 else b" "
    if x % 97 == 0:
        out += bytes((x >> s) & 0xff for s in range(0, 24, 3))
open(sys.argv[1], "wb").write(bytes(out))
PY

STDIN="$TMP/data"
identical_under_idle_shim gz /usr/bin/gzip -9 -n -c
expect_status gz plain 0
[ "$(stat -c %s "$TMP/gz.plain.out")" -gt 100000 ] || fail "gzip output is implausibly small"

STDIN="$TMP/gz.plain.out"
identical_under_idle_shim gunzip /usr/bin/gzip -d -c
expect_status gunzip plain 0
same_file "gzip round trip (plain)" "$TMP/data" "$TMP/gunzip.plain.out"
same_file "gzip round trip (idle shim)" "$TMP/data" "$TMP/gunzip.idle.out"

# gzip hardly allocates (its buffers are static), so ask only for some calls.
STDIN="$TMP/data"
served_by_shim gz totals 1 /usr/bin/gzip -9 -n -c
