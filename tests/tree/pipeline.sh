#!/bin/bash
# A shell pipeline under one budget: `python3 | python3` run by bash with
# limit=48M;limit.scope=tree. The left side holds 32 MiB and says so down
# the pipe; the right side, reading that line, asks for 32 MiB more and is
# refused (MemoryError); the tree's live bytes it reports (gfp_budget_usage
# through ctypes) include the left side's 32 MiB. Every process of the
# pipeline is a member: bash, both python3 (one GFP_TREE in all three).
source "$TESTS/lib.sh"
source "$TESTS/tree/tree.sh"
need_prog /usr/bin/python3

cat >"$TMP/left.py" <<'PY'
import os, sys, time
b = bytearray(32 * 2**20)
print(os.environ["GFP_TREE"], flush=True)
for _ in range(600):              # until the right side is done, 30 s at most
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.05)
PY
cat >"$TMP/right.py" <<'PY'
import ctypes, json, os, sys
tree = sys.stdin.readline().strip()
class Usage(ctypes.Structure):
    _fields_ = [("limit", ctypes.c_long), ("live", ctypes.c_long), ("reserved", ctypes.c_long)]
u = Usage()
ctypes.CDLL(None).gfpshim_budget_usage(ctypes.byref(u))
try:
    b = bytearray(32 * 2**20)
    got = "ok"
except MemoryError:
    got = "MemoryError"
print(json.dumps({"event": "right", "got": got, "live": u.live, "limit": u.limit,
                  "left_tree": tree, "my_tree": os.environ.get("GFP_TREE", "")}))
open(sys.argv[1], "w").close()
PY
GFP_POLICY='limit=48M;limit.scope=tree' LD_PRELOAD=$SHIM bounded 60 \
	bash -c 'echo "{\"event\":\"shell\",\"tree\":\"$GFP_TREE\"}"; /usr/bin/python3 "$1/left.py" "$1/done" | /usr/bin/python3 "$1/right.py" "$1/done"' _ "$TMP" \
	>"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "the pipeline failed"; }
expect_eq "the right side's request" MemoryError "$(field "$TMP/out" right got)"
shell_tree=$(field "$TMP/out" shell tree)
[ -n "$shell_tree" ] || fail "bash did not get GFP_TREE in its environment"
expect_eq "the left side's tree" "$shell_tree" "$(field "$TMP/out" right left_tree)"
expect_eq "the right side's tree" "$shell_tree" "$(field "$TMP/out" right my_tree)"
live=$(field "$TMP/out" right live)
[ "$live" -ge $((32 * MiB)) ] && [ "$live" -lt $((48 * MiB)) ] ||
	fail "the right side saw the tree's live bytes as $live, expected the left side's 32 MiB and less than the limit"
expect_eq "the limit the right side saw" $((48 * MiB)) "$(field "$TMP/out" right limit)"
note "right side: tree live $((live / 1024)) KiB before its request, refused"
[ ! -e "$shell_tree" ] || fail "the segment $shell_tree is still there after the last member ended"
