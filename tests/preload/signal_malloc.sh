#!/bin/bash
# A signal handler that mallocs: no crash, and the report counts exactly the
# allocations the program made (the printed number), none lost or doubled.
source "$TESTS/lib.sh"
n=$(GFP_REPORT=$TMP/r.json LD_PRELOAD=$SHIM "$BUILD/tests/preload/signal_malloc") || fail "exit $?"
got=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"]["malloc"]["calls"])' "$TMP/r.json")
# printf's own buffer and libc's start-up allocate a few more through malloc.
[ "$got" -ge "$n" ] && [ "$got" -le $((n + 50)) ] || fail "report counts $got mallocs, program made $n"
note "program made $n mallocs, report counts $got"

# The same under stats=sites, whose routes count a handler's malloc in line
# when it comes from the thread's last site.
n=$(GFP_POLICY=stats=sites GFP_REPORT=$TMP/s.json LD_PRELOAD=$SHIM "$BUILD/tests/preload/signal_malloc") ||
	fail "stats=sites: exit $?"
got=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"]["malloc"]["calls"])' "$TMP/s.json")
[ "$got" -ge "$n" ] && [ "$got" -le $((n + 50)) ] || fail "stats=sites: report counts $got mallocs, program made $n"
note "stats=sites: program made $n mallocs, report counts $got"
