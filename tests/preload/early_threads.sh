#!/bin/bash
# Threads started by a library constructor, before the shim's constructor:
# their allocations reach the shim and are counted.
source "$TESTS/lib.sh"
n=$(GFP_REPORT=$TMP/r.json LD_PRELOAD=$SHIM "$BUILD/tests/preload/early_threads") || fail "exit $?"
got=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"]["malloc"]["calls"])' "$TMP/r.json")
[ "$got" -ge "$n" ] || fail "report counts $got mallocs, the early threads made $n"
note "early threads made $n mallocs, report counts $got"
n=$(GFP_POLICY=stats=sites GFP_REPORT=$TMP/s.json LD_PRELOAD=$SHIM "$BUILD/tests/preload/early_threads") || fail "stats=sites: exit $?"
got=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"]["malloc"]["calls"])' "$TMP/s.json")
[ "$got" -ge "$n" ] || fail "stats=sites: report counts $got mallocs, the early threads made $n"
note "stats=sites: early threads made $n mallocs, report counts $got"
