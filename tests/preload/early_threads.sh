#!/bin/bash
# Threads started by a library constructor, before the shim's constructor:
# their allocations reach the shim and are counted.
source "$TESTS/lib.sh"
n=$(GFP_REPORT=$TMP/r.json LD_PRELOAD=$SHIM "$BUILD/tests/preload/early_threads") || fail "exit $?"
got=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"]["malloc"]["calls"])' "$TMP/r.json")
[ "$got" -ge "$n" ] || fail "report counts $got mallocs, the early threads made $n"
note "early threads made $n mallocs, report counts $got"
