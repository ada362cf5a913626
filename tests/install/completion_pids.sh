#!/bin/bash
# gfp-ctl's completion offers the pids of the processes that listen, with
# their names when bash lists them. See completion_pids.py.
source "$TESTS/lib.sh"
need_c_utf8
TMPDIR=$TMP /usr/bin/python3 -B "$TESTS/install/completion_pids.py" || fail "completions disagree (above)"
