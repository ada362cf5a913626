#!/bin/bash
# The case a tree exists for: one script starts two python3 children that each
# want a 40 MiB bytearray, under limit=64M. With limit.scope=tree they share
# the budget: while the first holds its 40 MiB the second is refused
# (python3's MemoryError, the shim's allocation failure report naming the
# tree's Mem-Info), and after the first has ended a third gets its 40 MiB.
# Under limit.scope=process (a budget each) both would succeed.
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
need_prog /usr/bin/python3

mkfifo "$TMP/fifo"
cat >"$TMP/script.sh" <<'SH'
py=/usr/bin/python3
$py -c '
import sys
b = bytearray(40 * 2**20)
print("first holds 40 MiB", flush=True)
sys.stdin.readline()
' <"$1/fifo" >"$1/first.out" 2>"$1/first.err" &
exec 3>"$1/fifo"
until [ -s "$1/first.out" ]; do sleep 0.05; done
second() {
	$py -c '
try:
    b = bytearray(40 * 2**20)
    print("ok")
except MemoryError:
    print("MemoryError")
'
}
second >"$1/second.out" 2>"$1/second.err"
echo >&3
exec 3>&-
wait
second >"$1/third.out" 2>"$1/third.err"
SH
GFP_POLICY='limit=64M;limit.scope=tree' LD_PRELOAD=$SHIM bounded 60 bash "$TMP/script.sh" "$TMP" ||
	fail "the script failed: $(cat "$TMP"/*.err)"
expect_eq "the first child" "first holds 40 MiB" "$(cat "$TMP/first.out")"
expect_eq "the second child, while the first holds 40 MiB" MemoryError "$(cat "$TMP/second.out")"
expect_eq "the third child, after the first ended" ok "$(cat "$TMP/third.out")"
# The refusal is the shim's: a costly request at the tree's watermark.
expect_contains "the second's failure report" "$TMP/second.err" \
	'^gfpshim: warning: python3[^ ]*\([0-9]+\): allocation failure: size:4194304[0-9] order:14'
/usr/bin/python3 - "$TMP/second.err" <<'PY' || fail "the report's Mem-Info is not the tree's"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"Mem-Info: live:([0-9.]+) MiB limit:([0-9.]+) MiB .*\(live, limit, free and reserved: the tree's\)", text)
assert m, text
live, limit = float(m.group(1)), float(m.group(2))
assert limit == 64.0, limit
assert 40.0 <= live < 64.0, live   # the first child's 40 MiB is in it
print("# second child's report: tree live %.1f MiB of %.1f MiB" % (live, limit))
PY
