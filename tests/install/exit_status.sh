#!/bin/bash
# Each tool's --help lists its exit statuses, and each one listed is what a
# real invocation gives (a missing program 127, a file that is not
# executable 126, a bad policy key 125, a bad option 2, ...); see
# exit_status.py.
source "$TESTS/lib.sh"
/usr/bin/python3 -B "$TESTS/install/exit_status.py" || fail "exit statuses disagree with --help (above)"
