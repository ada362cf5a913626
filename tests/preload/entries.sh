#!/bin/bash
# Every entry point of src/entries.def reaches the shim: the walker calls
# each once, and the report must count each (QUERY entries are not counted).
source "$TESTS/lib.sh"
GFP_REPORT=$TMP/r.json LD_PRELOAD=$SHIM "$BUILD/tests/preload/walk_entries" || fail "walker exited $?"
/usr/bin/python3 - "$SRC/src/entries.def" "$TMP/r.json" <<'PY' || exit 1
import json, re, sys
names = [(m.group(1), m.group(2)) for m in re.finditer(r'^ENTRY\(\w+, "([^"]+)", (\w+)\)', open(sys.argv[1]).read(), re.M)]
rep = json.load(open(sys.argv[2]))["entries"]
missing = [n for n, k in names if k != "QUERY" and rep.get(n, {}).get("calls", 0) < 1]
if len(names) < 31 or missing:
    sys.exit(f"FAIL: {len(names)} entries, not counted: {missing}")
print(f"# {len(names)} entries, all reached the shim")
PY
