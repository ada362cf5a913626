#!/bin/bash
# A signal handler that mallocs: no crash, and the report counts exactly the
# allocations the program made (the printed number), none lost or doubled.
source "$TESTS/lib.sh"
n=$(GFP_REPORT=$TMP/r.json LD_PRELOAD=$SHIM "$BUILD/tests/preload/signal_malloc") || fail "exit $?"
got=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"]["malloc"]["calls"])' "$TMP/r.json")
# printf's own buffer and libc's start-up allocate a few more through malloc.
[ "$got" -ge "$n" ] && [ "$got" -le $((n + 50)) ] || fail "report counts $got mallocs, program made $n"
note "program made $n mallocs, report counts $got"
