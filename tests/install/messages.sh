#!/bin/bash
# Every tool prints --version as "TOOL (gfpshim) VERSION" and every error as
# "TOOL: error: message", usage errors with the hint "try 'TOOL --help'";
# see messages.py for the invocations.
source "$TESTS/lib.sh"
/usr/bin/python3 -B "$TESTS/install/messages.py" || fail "messages disagree (above)"
